//! `elicit proxy` against a scripted misbehaving server: malformed lines
//! from either side, forms outside the subset, a server that cancels and
//! dies mid-form, one that ignores EOF.
//!
//! The host side is this test writing JSON-RPC lines: that keeps one
//! harness, lets every test see exactly the bytes a host would get, and
//! covers the 2026-07-28 era without depending on a host SDK's choices. A
//! test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use elicit_tests::mcp::{Host, fake, system};
use elicit_tests::{PrivateBus, within};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_lines_from_either_side_are_answered_not_fatal() {
    let bus = PrivateBus::start();
    let mut host = Host::proxy(bus.address(), &["--max-line-bytes", "2000"], &fake(&[]));
    // From the host.
    host.send_raw("this is not json").await;
    host.send_raw(r#"{"jsonrpc":"2.0","id":77,"method":"#).await;
    let reply = host.recv().await;
    assert_eq!(
        reply,
        json!({"jsonrpc":"2.0","id":77,"error":{"code":-32700,"message":reply["error"]["message"]}})
    );
    host.send_raw(r#"{"jsonrpc":"2.0","id":78}"#).await;
    assert_eq!(host.recv().await["error"]["code"], -32600);
    host.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":79,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "y".repeat(3000)
    ))
    .await;
    assert_eq!(host.call(80, "ping", json!({})).await["result"], json!({}));

    // From the server: garbage, an invalid message with an id, a broken
    // line with an id, an oversized line. The server gets the errors.
    host.send(json!({"jsonrpc":"2.0","id":81,"method":"tools/call","params":{"name":"malformed"}}))
        .await;
    let (_, before) = host.response(json!(81)).await;
    assert!(
        before.is_empty(),
        "nothing malformed reaches the host: {before:?}"
    );
    let mut got = Vec::new();
    for _ in 0..2 {
        let note = host.recv().await;
        assert_eq!(note["method"], "test/got");
        got.push(note["params"]["line"].clone());
    }
    assert!(
        got.iter()
            .any(|l| l["id"] == "srv-bad" && l["error"]["code"] == -32600),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|l| l["id"] == "srv-broken" && l["error"]["code"] == -32700),
        "{got:?}"
    );
    host.send(json!({"jsonrpc":"2.0","id":82,"method":"tools/call","params":{"name":"huge"}}))
        .await;
    let (_, before) = host.response(json!(82)).await;
    assert!(before.is_empty(), "the oversized line was dropped: {before:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_outside_the_subset_is_refused_at_once() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bad_form"}}))
        .await;
    let note = loop {
        let m = host.recv().await;
        if m["method"] == "test/got" {
            break m;
        }
    };
    assert_eq!(note["params"]["line"]["id"], "e-bad");
    assert_eq!(note["params"]["line"]["error"]["code"], -32602);
    assert!(frontend.is_idle(), "the user never saw it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_cancels_a_form_and_dies_mid_form() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    host.call(1, "tools/call", json!({"name": "ask"})).await;
    let shown = frontend.next_show().await;
    host.call(
        2,
        "tools/call",
        json!({"name": "cancel", "arguments": {"id": "e-1"}}),
    )
    .await;
    let (form, _) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);

    host.call(3, "tools/call", json!({"name": "ask"})).await;
    let shown = frontend.next_show().await;
    host.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"die"}}))
        .await;
    assert_eq!(host.exit_code().await, Some(3), "the proxy exits with the server");
    let (form, _) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_eof_is_killed_not_orphaned() {
    let bus = PrivateBus::start();
    let mut host = Host::proxy(bus.address(), &["--exit-grace-ms", "200"], &fake(&["--stubborn"]));
    assert_eq!(host.call(1, "ping", json!({})).await["result"], json!({}));
    host.close_stdin();
    let code = within("the proxy to give up on the server", host.child.wait())
        .await
        .expect("wait");
    assert_eq!(code.code(), Some(128 + 9), "the server was killed: {code:?}");

    // A signal to the proxy ends the server at once: TERM, which it
    // ignores, then KILL after the grace.
    let mut host = Host::proxy(bus.address(), &["--exit-grace-ms", "200"], &fake(&["--stubborn"]));
    assert_eq!(host.call(1, "ping", json!({})).await["result"], json!({}));
    let pid = host.child.id().expect("pid").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    assert_eq!(host.exit_code().await, Some(128 + 9), "the server was killed");
}
