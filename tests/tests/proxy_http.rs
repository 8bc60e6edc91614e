//! `elicit proxy --url URL` (issue 17): the stdio-to-Streamable-HTTP bridge
//! in front of real remote servers, brokering their elicitations as the
//! stdio proxy does.
//!
//! The servers: tests/peers/python/http_server.py (the `mcp` package, both
//! eras on one endpoint) and server-everything's `streamableHttp`; the
//! host is this test writing JSON-RPC lines to the proxy's stdio, declaring
//! no elicitation capability, with a scripted front-end as the human. Then
//! the conformance suite's client scenarios, with the proxy as the client
//! under test (tests/peers/python/conformance_host.py drives it and answers
//! its forms). A test whose peer is missing says so loudly and returns, or
//! fails when `CI` is set.

use elicit_tests::http::{Run, client_scenario, everything_over_http, proxy_url, python_http_server};
use elicit_tests::mcp::{meta2026, system, text_of};
use elicit_tests::{Daemon, PrivateBus};
use serde_json::{Value, json};

// ------------------------------------------------ the Python server, 2025

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_http_2025_accept_decline_cancel() {
    let Some(server) = python_http_server().await else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &server.url, &[]);
    let init = host.initialize(json!({})).await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "elicit-test-server",
        "the remote server's handshake reaches the host: {init}"
    );

    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(
        shown.server.as_deref(),
        Some("elicit-test-server"),
        "the form names the remote server"
    );
    assert_eq!(shown.request["message"], "Which seat, and how many?");
    frontend
        .answer(&shown, "accept", json!({"seat": "12A", "count": 2}))
        .await
        .expect("accept");
    let (result, before) = host.response(json!(1)).await;
    assert!(
        text_of(&result).contains("booked 2 x 12A"),
        "the accepted answer reaches the server over HTTP: {result}"
    );
    assert!(
        before.iter().all(|m| m["method"] != "elicitation/create"),
        "a host without the capability never sees the elicitation: {before:?}"
    );

    host.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"book","arguments":{}}}))
        .await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("decline");
    let (result, _) = host.response(json!(2)).await;
    assert!(
        text_of(&result).contains("not booked: decline"),
        "the decline reaches the server: {result}"
    );

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
    assert!(
        text_of(&result).contains("no answer: cancel"),
        "the cancel reaches the server: {result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_http_2025_url_mode_request_and_error() {
    let Some(server) = python_http_server().await else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &server.url, &[]);
    host.initialize(json!({})).await;

    host.send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sign_in","arguments":{}}}),
    )
    .await;
    let shown = frontend.next_show().await;
    assert_eq!(
        shown.request["mode"], "url",
        "a URL-mode form: {:?}",
        shown.request
    );
    assert_eq!(shown.request["url"], "https://example.com/sign-in");
    frontend
        .answer(&shown, "accept", Value::Null)
        .await
        .expect("consent");
    let (result, _) = host.response(json!(1)).await;
    assert!(
        text_of(&result).contains("sign in: accept"),
        "the consent reaches the server: {result}"
    );

    // The -32042 error: its URL is shown, then the error reaches the host.
    host.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"sign_in","arguments":{"error":true}}}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(
        shown.request["url"], "https://example.com/sign-in",
        "the URL the error requires is shown: {:?}",
        shown.request
    );
    frontend
        .answer(&shown, "accept", Value::Null)
        .await
        .expect("consent");
    let (error, _) = host.response(json!(2)).await;
    assert_eq!(
        error["error"]["code"], -32042,
        "the host gets the server's error: {error}"
    );
}

// ------------------------------------------------ the Python server, 2026

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_http_2026_rounds_accept_decline_and_two_rounds() {
    let Some(server) = python_http_server().await else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &server.url, &[]);

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
    assert_ne!(
        result["result"]["resultType"], "input_required",
        "the proxy answered the round itself: {result}"
    );
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
    assert!(
        text_of(&result).contains("not booked: decline"),
        "the decline reaches the server: {result}"
    );

    host.send(json!({"jsonrpc":"2.0","id":"c","method":"tools/call",
        "params":{"name":"two_step","arguments":{},"_meta":meta2026(json!({}))}}))
        .await;
    let seat = frontend.next_show().await;
    frontend
        .answer(&seat, "accept", json!({"seat": "7F", "count": 1}))
        .await
        .expect("seat");
    let meal = frontend.next_show().await;
    assert_eq!(
        meal.request["message"], "A meal for seat 7F?",
        "the second round knows the first's answer"
    );
    frontend
        .answer(&meal, "accept", json!({"meal": "soup"}))
        .await
        .expect("meal");
    let (result, _) = host.response(json!("c")).await;
    assert!(
        text_of(&result).contains("seat 7F with soup"),
        "both rounds reach the server: {result}"
    );
}

// ------------------------------------------------ server-everything

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_http_form_accept_decline_cancel() {
    let Some(server) = everything_over_http().await else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &server.url, &[]);
    host.initialize(json!({})).await;
    let call = json!({"name": "trigger-elicitation-request", "arguments": {}});

    host.send(json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":call}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.server.as_deref(), Some("mcp-servers/everything"));
    frontend
        .answer(
            &shown,
            "accept",
            json!({"name": "Ada Lovelace", "check": true, "integer": 7}),
        )
        .await
        .expect("accept");
    let (result, _) = host.response(json!(10)).await;
    let text = text_of(&result);
    assert!(
        text.contains("- Name: Ada Lovelace") && text.contains("Favorite Integer: 7"),
        "the answer reaches server-everything over HTTP: {text}"
    );

    for (id, action, expected) in [(11, "decline", "declined"), (12, "cancel", "cancelled")] {
        host.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":call}))
            .await;
        let shown = frontend.next_show().await;
        frontend
            .answer(&shown, action, Value::Null)
            .await
            .expect("answer");
        let (result, _) = host.response(json!(id)).await;
        assert!(
            text_of(&result).contains(expected),
            "{action} reaches server-everything: {result}"
        );
    }
}

// ------------------------------------------------ the conformance suite

/// One client scenario with `elicit proxy --url` as the client; its run.
async fn proxy_scenario(scenario: &str) -> Option<Run> {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    client_scenario(&bus, scenario, &[]).await
}

/// Fails with the suite's whole output unless the scenario passed.
fn assert_passed(scenario: &str, run: &Run) {
    assert!(
        run.passed() && run.text.contains(" 0 failed"),
        "conformance client scenario {scenario} did not pass ({:?}):\n{}",
        run.counts,
        run.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_initialize() {
    let Some(run) = proxy_scenario("initialize").await else {
        return;
    };
    assert_passed("initialize", &run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_tools_call() {
    let Some(run) = proxy_scenario("tools_call").await else {
        return;
    };
    assert_passed("tools_call", &run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_elicitation_defaults() {
    let scenario = "elicitation-sep1034-client-defaults";
    let Some(run) = proxy_scenario(scenario).await else {
        return;
    };
    assert_passed(scenario, &run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_sse_retry() {
    let Some(run) = proxy_scenario("sse-retry").await else {
        return;
    };
    assert_passed("sse-retry", &run);
}

/// The auth/* client scenarios of 2025-06-18 and 2025-11-25, and the two
/// of 2025-03-26 (conformance 0.1.16), each run whole; the failures are collected and listed together.
/// What they need of the client is in conformance_host.py: the authorization
/// URL is asked as a URL-mode form, accepted and fetched; auth/basic-cimd
/// wants the client id https://conformance-test.local/client-metadata.json;
/// auth/pre-registration passes a client id and secret.
const AUTH_SCENARIOS: [&str; 16] = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    // The older fallbacks (no protected-resource metadata; endpoints at the
    // server's origin), which the bridge keeps for servers not yet moved on.
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_auth_scenarios() {
    let mut failures = Vec::new();
    for scenario in AUTH_SCENARIOS {
        let Some(run) = proxy_scenario(scenario).await else {
            return;
        };
        eprintln!("{scenario}: {:?}", run.counts);
        if !run.passed() {
            failures.push(format!("--- {scenario}: {:?}\n{}", run.counts, run.failures()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} auth scenarios failed:\n{}",
        failures.len(),
        AUTH_SCENARIOS.len(),
        failures.join("\n")
    );
}
