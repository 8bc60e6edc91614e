//! `elicit proxy` in front of a server of ours on the Python `mcp` package:
//! 2025-era elicitation, 2026-07-28 `input_required` rounds, no broker,
//! a daemon restart mid-form, `--prefer host` and keep-alives.
//!
//! The host side is this test writing JSON-RPC lines: that keeps one
//! harness, lets every test see exactly the bytes a host would get, and
//! covers the 2026-07-28 era without depending on a host SDK's choices. A
//! test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use elicit_tests::mcp::{Host, meta2026, python, system, text_of};
use elicit_tests::{PrivateBus, TestFrontend};
use serde_json::{Value, json};

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
    // The proxy warns the host that no broker answers, then passes the form.
    let warning = host.recv().await;
    assert_eq!(warning["method"], "notifications/message", "{warning}");
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
