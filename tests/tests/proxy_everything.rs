//! `elicit proxy` in front of `@modelcontextprotocol/server-everything` from
//! npm, with the real `elicitd` on a private bus and a scripted front-end
//! answering as the human.
//!
//! The host side is this test writing JSON-RPC lines: that keeps one
//! harness, lets every test see exactly the bytes a host would get, and
//! covers the 2026-07-28 era without depending on a host SDK's choices. A
//! test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use elicit_tests::mcp::{Host, V2025, everything, system, text_of, tool_names};
use elicit_tests::{Daemon, PrivateBus};
use serde_json::{Value, json};

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

/// The capabilities of a host that runs elicitations as tasks (MCP
/// 2025-11-25).
fn task_host() -> Value {
    json!({"elicitation": {}, "tasks": {"requests": {"elicitation": {"create": {}}}}})
}

/// A host that declared `tasks.requests.elicitation.create` gets its
/// declaration honoured: the server's task-augmented `elicitation/create`
/// becomes a task of the proxy's, which the server polls with `tasks/get`
/// (answered by the proxy, never the host) until the form is answered,
/// then fetches with `tasks/result`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_async_elicitation_is_served_as_a_task() {
    let Some(server) = everything() else { return };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(task_host()).await;
    let names = tool_names(&host.call(1, "tools/list", json!({})).await);
    assert!(
        names.contains(&"trigger-elicitation-request-async".to_owned()),
        "{names:?}"
    );
    host.send(json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
        "params": {"name": "trigger-elicitation-request-async", "arguments": {}}}))
        .await;
    let shown = frontend.next_show().await;
    assert!(
        shown.request.get("task").is_none(),
        "the form is the plain request: {}",
        shown.request
    );
    frontend
        .answer(&shown, "accept", json!({"name": "Ada", "favoriteColor": "Blue"}))
        .await
        .expect("accept");
    let (result, before) = host.response(json!(30)).await;
    let text = text_of(&result);
    assert!(!text.contains("[SYNC]"), "{text}");
    assert!(
        text.contains("[COMPLETED]") && text.contains("- Name: Ada"),
        "{text}"
    );
    assert!(text.contains("Task created: elicitd-task-"), "{text}");
    assert!(
        !before
            .iter()
            .any(|m| m["method"].as_str().is_some_and(|m| m.starts_with("tasks/"))),
        "the server's task requests never reach the host: {before:?}"
    );
}

/// A `tools/call` run as the server's task, whose elicitation comes during
/// `input_required` through the host's `tasks/result`, keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_research_task_asks_through_the_proxy() {
    let Some(server) = everything() else { return };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(task_host()).await;
    let created = host
        .call(
            40,
            "tools/call",
            json!({"name": "simulate-research-query",
                   "arguments": {"topic": "python", "ambiguous": true},
                   "task": {"ttl": 60000}}),
        )
        .await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    host.send(json!({"jsonrpc": "2.0", "id": 41, "method": "tasks/result", "params": {"taskId": task}}))
        .await;
    let shown = frontend.next_show().await;
    let choice =
        shown.request["requestedSchema"]["properties"]["interpretation"]["oneOf"][0]["const"].clone();
    assert!(choice.is_string(), "{}", shown.request);
    frontend
        .answer(&shown, "accept", json!({"interpretation": choice}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(41)).await;
    let text = text_of(&result);
    assert!(text.contains(choice.as_str().unwrap_or_default()), "{text}");
}
