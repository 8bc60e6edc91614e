//! `elicit proxy` end to end: a private bus, the real `elicitd`, the real
//! `elicit proxy` binary, real MCP servers (`server-everything` from npm,
//! a server of ours on the Python `mcp` package, and a scripted
//! misbehaving one), and a scripted front-end answering as the human.
//!
//! The host side is this test writing JSON-RPC lines: that keeps one
//! harness, lets every test see exactly the bytes a host would get, and
//! covers the 2026-07-28 era without depending on a host SDK's choices.
//!
//! is missing says so loudly and returns, or fails when `CI` is set.

use std::process::Stdio;

use elicit_tests::mcp::{Host, V2025, everything, fake, meta2026, python, text_of, tool_names};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, binary, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

async fn system() -> (PrivateBus, Daemon, TestFrontend) {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let frontend = TestFrontend::register(&bus, "script", 0).await;
    (bus, daemon, frontend)
}

// ---------------------------------------------------------------- everything

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_elicitation_tools_appear_only_through_the_proxy() {
    let Some(server) = everything() else { return };
    let (bus, _daemon, _frontend) = system().await;
    let mut direct = Host::direct(&server);
    direct.initialize(json!({})).await;
    let names = tool_names(&direct.call(1, "tools/list", json!({})).await);
    assert!(!names.iter().any(|n| n.contains("elicitation")), "{names:?}");

    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;
    let names = tool_names(&host.call(1, "tools/list", json!({})).await);
    assert!(
        names.contains(&"trigger-elicitation-request".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"trigger-url-elicitation".to_owned()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_form_accept_decline_cancel_and_invalid_answer() {
    let Some(server) = everything() else { return };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;
    let call = json!({"name": "trigger-elicitation-request", "arguments": {}});

    host.send(json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":call}))
        .await;
    let shown = frontend.next_show().await;
    let properties = shown.request["requestedSchema"]["properties"]
        .as_object()
        .expect("properties");
    assert!(properties.len() >= 12, "every field kind arrives: {properties:?}");
    assert_eq!(shown.server.as_deref(), Some("mcp-servers/everything"));
    // An invalid answer goes back to the front-end, never to the server.
    let refused = frontend
        .answer(&shown, "accept", json!({"name": "Ada", "integer": 500}))
        .await;
    assert!(
        matches!(refused, Err(elicit_proto::Error::InvalidAnswer(_))),
        "{refused:?}"
    );
    frontend
        .answer(
            &shown,
            "accept",
            json!({"name": "Ada Lovelace", "check": true, "integer": 7, "untitledMultipleSelectEnum": ["Piano"]}),
        )
        .await
        .expect("accept");
    let (result, _) = host.response(json!(10)).await;
    let text = text_of(&result);
    assert!(text.contains("User provided the requested information"), "{text}");
    assert!(
        text.contains("- Name: Ada Lovelace") && text.contains("Favorite Integer: 7"),
        "{text}"
    );
    assert!(!text.contains("500"));

    for (id, action, expected) in [(11, "decline", "declined"), (12, "cancel", "cancelled")] {
        host.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":call}))
            .await;
        let shown = frontend.next_show().await;
        frontend
            .answer(&shown, action, Value::Null)
            .await
            .expect("answer");
        let (result, _) = host.response(json!(id)).await;
        assert!(text_of(&result).contains(expected), "{result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_url_mode_on_the_request_and_the_error_path() {
    let Some(server) = everything() else { return };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;

    let args = json!({"url": "https://example.com/consent", "elicitationId": "el-1"});
    host.send(json!({"jsonrpc":"2.0","id":20,"method":"tools/call",
                     "params":{"name":"trigger-url-elicitation","arguments":args}}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["mode"], "url");
    assert_eq!(shown.request["url"], "https://example.com/consent");
    frontend
        .answer(&shown, "accept", Value::Null)
        .await
        .expect("consent");
    let (result, _) = host.response(json!(20)).await;
    assert!(
        text_of(&result).contains("completed the URL elicitation"),
        "{result}"
    );

    // The error path: the prerequisite URL is shown, then the error
    // reaches the host, whose retry passes through.
    let args = json!({"url": "https://example.com/authz", "errorPath": true});
    let call = json!({"name":"trigger-url-elicitation","arguments":args});
    host.send(json!({"jsonrpc":"2.0","id":21,"method":"tools/call","params":call}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["url"], "https://modelcontextprotocol.io");
    frontend
        .answer(&shown, "accept", Value::Null)
        .await
        .expect("consent");
    let (error, _) = host.response(json!(21)).await;
    assert_eq!(error["error"]["code"], -32042, "{error}");
    host.send(json!({"jsonrpc":"2.0","id":22,"method":"tools/call","params":call}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["url"], "https://example.com/authz");
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("decline");
    let (result, _) = host.response(json!(22)).await;
    assert!(text_of(&result).contains("declined to open the URL"), "{result}");
}

/// Ordinary traffic through the proxy is byte for byte what the server
/// says directly (the host declares elicitation itself, so that nothing
/// needs rewriting and the server behaves the same both ways). It declares
/// no roots: the server would ask for them on a timer, at a moment that
/// differs from run to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_ordinary_traffic_is_byte_exact() {
    let Some(server) = everything() else { return };
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let big = "é≈x".repeat(200_000);
    let script: Vec<Value> = [
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":V2025,
            "capabilities":{"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"h","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"message":big}}}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1.5,"b":1e3}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get-tiny-image","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get-structured-content","arguments":{"location":"New York"}}}),
        json!({"jsonrpc":"2.0","id":6,"method":"resources/list"}),
        json!({"jsonrpc":"2.0","id":7,"method":"prompts/list"}),
        json!({"jsonrpc":"2.0","id":8,"method":"ping"}),
        json!({"jsonrpc":"2.0","id":9,"method":"no/such/method"}),
    ]
    .into();
    async fn transcript(host: &mut Host, script: &[Value]) -> Vec<String> {
        let mut out = Vec::new();
        for message in script {
            host.send(message.clone()).await;
            let Some(id) = message.get("id") else { continue };
            loop {
                let line = host.recv_raw().await;
                let parsed: Value = serde_json::from_str(&line).expect("JSON");
                out.push(line);
                if parsed.get("id") == Some(id) && parsed.get("method").is_none() {
                    break;
                }
            }
        }
        out
    }
    let direct = transcript(&mut Host::direct(&server), &script).await;
    let proxied = transcript(&mut Host::proxy(bus.address(), &[], &server), &script).await;
    assert!(direct.iter().map(String::len).sum::<usize>() > 1_000_000);
    assert_eq!(direct.len(), proxied.len());
    for (d, p) in direct.iter().zip(&proxied) {
        assert!(
            d == p,
            "a line differs:\n direct: {:.300}\n proxy:  {:.300}",
            d,
            p
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_host_disconnect_mid_form_withdraws_it_and_ends_the_server() {
    let Some(server) = everything() else { return };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;
    host.send(json!({"jsonrpc":"2.0","id":10,"method":"tools/call",
                     "params":{"name":"trigger-elicitation-request","arguments":{}}}))
        .await;
    let shown = frontend.next_show().await;
    host.close_stdin();
    let (form, _reason) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);
    host.exit_code().await;
}

// ---------------------------------------------------------------- python mcp

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_legacy_accept_decline_cancel_with_no_host_callback() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;

    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.server.as_deref(), Some("elicit-test-server"));
    frontend
        .answer(&shown, "accept", json!({"seat": "12A", "count": 2}))
        .await
        .expect("accept");
    let (result, before) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("booked 2 x 12A"), "{result}");
    assert!(
        before.iter().all(|m| m["method"] != "elicitation/create"),
        "the host never sees the elicitation"
    );

    host.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("decline");
    let (result, _) = host.response(json!(2)).await;
    assert!(text_of(&result).contains("not booked: decline"), "{result}");

    host.send(
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"legacy_ask","arguments":{}}}),
    )
    .await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "cancel", Value::Null)
        .await
        .expect("cancel");
    let (result, _) = host.response(json!(3)).await;
    assert!(text_of(&result).contains("no answer: cancel"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_2026_rounds_accept_decline_and_several_rounds() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);

    host.send(json!({"jsonrpc":"2.0","id":"a","method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Which seat, and how many?");
    frontend
        .answer(&shown, "accept", json!({"seat": "3C", "count": 1}))
        .await
        .expect("accept");
    let (result, before) = host.response(json!("a")).await;
    assert!(
        before.is_empty(),
        "only the final result reaches the host: {before:?}"
    );
    assert_ne!(result["result"]["resultType"], "input_required");
    assert!(text_of(&result).contains("booked 1 x 3C"), "{result}");

    host.send(json!({"jsonrpc":"2.0","id":"b","method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("decline");
    let (result, _) = host.response(json!("b")).await;
    assert!(text_of(&result).contains("not booked: decline"), "{result}");

    host.send(json!({"jsonrpc":"2.0","id":"c","method":"tools/call",
        "params":{"name":"two_step","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let seat = frontend.next_show().await;
    frontend
        .answer(&seat, "accept", json!({"seat": "7F", "count": 1}))
        .await
        .expect("seat");
    let meal = frontend.next_show().await;
    assert_eq!(meal.request["message"], "A meal for seat 7F?");
    frontend
        .answer(&meal, "accept", json!({"meal": "soup"}))
        .await
        .expect("meal");
    let (result, _) = host.response(json!("c")).await;
    assert!(text_of(&result).contains("seat 7F with soup"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_2026_progress_cancel_max_rounds_and_tampered_state() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(
        bus.address(),
        &["--max-rounds", "1", "--keepalive-ms", "100"],
        &server,
    );

    // Progress keeps the host's request alive while the form is open.
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(json!({"progressToken":"tok"}))}}))
        .await;
    let shown = frontend.next_show().await;
    let progress = host.recv().await;
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "tok");
    frontend
        .answer(&shown, "accept", json!({"seat": "1A", "count": 3}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("booked 3 x 1A"), "{result}");

    // The host cancels: the form is withdrawn and the host gets nothing.
    host.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let shown = frontend.next_show().await;
    host.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}))
        .await;
    let (form, _) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);
    host.send(json!({"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":meta2026(json!({}))}}))
        .await;
    let (_, before) = host.response(json!(3)).await;
    assert!(
        before.iter().all(|m| m.get("id") != Some(&json!(2))),
        "{before:?}"
    );

    // Two rounds with --max-rounds 1: a clear error, not a hang.
    host.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call",
        "params":{"name":"two_step","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let seat = frontend.next_show().await;
    frontend
        .answer(&seat, "accept", json!({"seat": "2B", "count": 1}))
        .await
        .expect("seat");
    let (error, _) = host.response(json!(4)).await;
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("more than 1"),
        "{error}"
    );

    // A host that drives its own retry with a forged requestState: the
    // proxy passes it through and the server's refusal reaches the host.
    host.send(json!({"jsonrpc":"2.0","id":5,"method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(json!({})),
                  "inputResponses":{"__main__:ask_seat":{"action":"accept","content":{"seat":"X","count":1}}},
                  "requestState":"v1.forged"}}))
        .await;
    let (refused, _) = host.response(json!(5)).await;
    assert!(
        refused.get("error").is_some(),
        "a forged requestState is refused: {refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_without_a_broker_declines_or_passes_to_the_host() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    // A bus without elicitd on it.
    let bus = PrivateBus::start();
    let mut host = Host::proxy(bus.address(), &["--no-broker", "decline"], &server);
    host.initialize(json!({})).await;
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let (result, _) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("not booked: decline"), "{result}");

    // The default: a host that declared elicitation answers it itself.
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({"elicitation": {}})).await;
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let request = host.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    host.send(json!({"jsonrpc":"2.0","id":request["id"],"result":{"action":"accept","content":{"seat":"H","count":4}}}))
        .await;
    let (result, _) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("booked 4 x H"), "{result}");

    // 2026-07-28 without elicitd: the host that declared forms gets the
    // `input_required` round itself, under its own id.
    let mut host = Host::proxy(bus.address(), &[], &server);
    let caps = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}});
    host.send(json!({"jsonrpc":"2.0","id":"m1","method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(caps)}}))
        .await;
    let (round, _) = host.response(json!("m1")).await;
    assert_eq!(round["result"]["resultType"], "input_required", "{round}");
    // A 2026 host that declared nothing gets the --no-broker outcome.
    let mut host = Host::proxy(bus.address(), &["--no-broker", "cancel"], &server);
    host.send(json!({"jsonrpc":"2.0","id":"m2","method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let (result, _) = host.response(json!("m2")).await;
    assert!(text_of(&result).contains("not booked: cancel"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_answer_survives_a_daemon_restart_mid_form() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, mut daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let shown = frontend.next_show().await;
    daemon.restart().await;
    drop(frontend);
    let mut frontend = TestFrontend::register(&bus, "script-again", 0).await;
    let again = frontend.next_show().await;
    assert_eq!(again.request["message"], shown.request["message"]);
    frontend
        .answer(&again, "accept", json!({"seat": "9Z", "count": 1}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("booked 1 x 9Z"), "{result}");
}

// ---------------------------------------------------------------- misbehaviour

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

    // A signal to the proxy ends it the same orderly way.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_prefer_host_and_legacy_keepalive() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;

    // --prefer host: a host that renders forms gets them itself.
    let mut host = Host::proxy(bus.address(), &["--prefer", "host"], &server);
    host.initialize(json!({"elicitation": {"form": {}}})).await;
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let request = host.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    host.send(json!({"jsonrpc":"2.0","id":request["id"],"result":{"action":"decline"}}))
        .await;
    let (result, _) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("not booked: decline"), "{result}");
    assert!(frontend.is_idle(), "elicitd was not asked");

    // Legacy era: progress for the host's open request while the form is up.
    let mut host = Host::proxy(bus.address(), &["--keepalive-ms", "100"], &server);
    host.initialize(json!({})).await;
    host.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"book","arguments":{},"_meta":{"progressToken":42}}}))
        .await;
    let shown = frontend.next_show().await;
    let progress = host.recv().await;
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], 42);
    frontend
        .answer(&shown, "accept", json!({"seat": "5E", "count": 2}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(2)).await;
    assert!(text_of(&result).contains("booked 2 x 5E"), "{result}");
}

// ---------------------------------------------------------------- remote

/// The fallback of REMOTE.md against a real OpenSSH server on 127.0.0.1:
/// the "remote" proxy reaches the daemon through `ssh -R` to the whole bus
/// socket (tests/tests/asker_socket.rs has the recommended asker socket).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_agent_reaches_the_daemon_through_ssh_forwarding() {
    let Some(sshd) = elicit_tests::ssh::Sshd::start() else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let remote_socket = dir.path().join("remote-bus.sock");
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let client = sshd.forward(&user, &remote_socket, &bus.dir().join("bus")).await;

    let address = format!("unix:path={}", remote_socket.display());
    let mut host = Host::proxy(&address, &[], &fake(&[]));
    host.call(1, "tools/call", json!({"name": "ask"})).await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Your name?");
    frontend
        .answer(&shown, "accept", json!({"name": "far away"}))
        .await
        .expect("accept");
    let got = loop {
        let m = host.recv().await;
        if m["method"] == "test/got" {
            break m;
        }
    };
    assert_eq!(got["params"]["line"]["result"]["content"]["name"], "far away");
    drop(host);
    drop(client);
}

/// Node hosts connect a server's stdio through socket pairs, shells and
/// scripts through files: the proxy polls a socket (as it does a pipe) and
/// falls back to blocking reads and writes for a file; both relay alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_on_a_socket_pair_or_on_files_are_relayed() {
    use std::os::fd::OwnedFd;
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let proxy = || {
        let mut cmd = Command::new(binary("elicit"));
        cmd.arg("--bus")
            .arg(bus.address())
            .arg("proxy")
            .arg("--")
            .args(fake(&[]))
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        cmd
    };
    let answered = |line: &str| {
        let reply: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(reply["id"], json!(1), "{line}");
        assert!(reply.get("result").is_some(), "{line}");
    };

    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
    let theirs_out = theirs.try_clone().expect("dup");
    let mut child = proxy()
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .spawn()
        .expect("start the proxy");
    ours.set_nonblocking(true).expect("non-blocking");
    let (read, mut write) = tokio::net::UnixStream::from_std(ours)
        .expect("tokio socket")
        .into_split();
    write
        .write_all(format!("{ping}\n").as_bytes())
        .await
        .expect("write");
    let mut lines = BufReader::new(read).lines();
    let line = within("the reply over the socket", lines.next_line())
        .await
        .expect("read")
        .expect("a line");
    answered(&line);
    drop(write);
    let status = within("the proxy to exit on EOF", child.wait())
        .await
        .expect("wait");
    assert!(status.success(), "{status}");

    let input = bus.dir().join("host-input.jsonl");
    let output = bus.dir().join("host-output.jsonl");
    std::fs::write(&input, format!("{ping}\n")).expect("input file");
    let status = within(
        "the proxy to relay a file and exit",
        proxy()
            .stdin(std::fs::File::open(&input).expect("open input"))
            .stdout(std::fs::File::create(&output).expect("create output"))
            .status(),
    )
    .await
    .expect("run");
    assert!(status.success(), "{status}");
    let written = std::fs::read_to_string(&output).expect("output file");
    answered(written.lines().next().expect("one reply line"));
}
