//! A request the host cancels drops its form (Codex cancels a `tools/call`
//! when its `tool_timeout_sec` runs out): the keep-alive progress for it
//! stops at once, and a form only that request was waiting on is withdrawn
//! with reason `cancelled`, in the 2026-07-28 era (where the round belongs
//! to the request) and in the 2025 eras once every request in flight when
//! the form came has ended (see elicit_proxy::owner).
//!
//! The server is the scripted one: its `ask_and_wait` answers the call
//! only once its form is answered, and ignores the host's cancellation,
//! as a server may.

use std::time::{Duration, Instant};

use elicit_tests::mcp::{Host, fake, meta2026, system};
use elicit_tests::{PrivateBus, Shown, TestFrontend, eventually};
use serde_json::{Value, json};

/// The keep-alive period the tests run with.
const KEEPALIVE_MS: u64 = 100;

fn proxy(bus: &PrivateBus) -> Host {
    let every = KEEPALIVE_MS.to_string();
    Host::proxy(bus.address(), &["--keepalive-ms", &every], &fake(&[]))
}

fn cancel(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "tool timeout"}})
}

fn is_progress_for(message: &Value, token: &str) -> bool {
    message["method"] == "notifications/progress" && message["params"]["progressToken"] == token
}

/// Reads the host's lines for `window` and fails on any progress for
/// `token`: the keep-alive would have sent several in that time. Progress
/// the proxy wrote before it handled the cancellation may still be unread:
/// a ping sent now is answered after all of it, so reading starts there.
async fn no_progress_for(host: &mut Host, token: &str, window: Duration) {
    host.send(json!({"jsonrpc": "2.0", "id": "barrier", "method": "ping"}))
        .await;
    while host.recv().await["id"] != "barrier" {}
    let read = async {
        loop {
            let message = host.recv().await;
            assert!(
                !is_progress_for(&message, token),
                "progress after the cancellation: {message}"
            );
        }
    };
    let _ = tokio::time::timeout(window, read).await;
}

async fn broker_forms(bus: &PrivateBus) -> usize {
    let output = tokio::process::Command::new(elicit_tests::binary("elicit"))
        .args(["--bus", bus.address(), "list", "--json"])
        .output()
        .await
        .expect("elicit list runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let forms: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    forms.as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_request_cancelled_by_the_host_withdraws_its_form_and_its_keepalive() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy(&bus);
    host.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask_and_wait", "arguments": {}, "_meta": {"progressToken": "p7"}}}))
        .await;
    let shown = frontend.next_show().await;
    // The keep-alive runs for the request while the form is open.
    loop {
        if is_progress_for(&host.recv().await, "p7") {
            break;
        }
    }
    host.send(cancel(json!(7))).await;
    let (form, reason) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);
    assert_eq!(reason, "cancelled");
    // The server, which ignored the cancellation, is told nobody answers.
    let echoed = loop {
        let message = host.recv().await;
        if message["method"] == "test/got" {
            break message;
        }
    };
    assert_eq!(echoed["params"]["line"]["id"], "e-7");
    assert_eq!(echoed["params"]["line"]["result"], json!({"action": "cancel"}));
    no_progress_for(&mut host, "p7", Duration::from_millis(5 * KEEPALIVE_MS)).await;
}

/// Starts calls 10 and 11, each asking a form: form A comes while call 10
/// is the only one in flight (it is call 10's), form B while 10 and 11 are
/// (it may serve either). Returns A as shown; B waits in the queue.
async fn two_calls_two_forms(bus: &PrivateBus, host: &mut Host, frontend: &mut TestFrontend) -> Shown {
    host.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "ask_and_wait", "arguments": {}}}))
        .await;
    let a = frontend.next_show().await;
    host.send(json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "ask_and_wait", "arguments": {}}}))
        .await;
    eventually("form B in the broker's queue", || async {
        broker_forms(bus).await == 2
    })
    .await;
    a
}

/// Continue's SDK cancels both of its calls at 60 s: once every request a
/// form may serve is cancelled, nobody is left to want its answer, and it
/// is withdrawn at once (issue 40).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_form_whose_every_possible_owner_is_cancelled_is_withdrawn_at_once() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy(&bus);
    let a = two_calls_two_forms(&bus, &mut host, &mut frontend).await;
    let cancelled_at = Instant::now();
    host.send(cancel(json!(11))).await;
    host.send(cancel(json!(10))).await;
    let (form, reason) = frontend.next_withdraw().await;
    assert_eq!(form, a.form, "the shown form A is withdrawn");
    assert_eq!(reason, "cancelled");
    eventually("B withdrawn too", || async { broker_forms(&bus).await == 0 }).await;
    let took = cancelled_at.elapsed();
    eprintln!("both forms gone {} ms after the cancellations", took.as_millis());
    assert!(
        took < Duration::from_secs(1),
        "both forms gone only after {took:?}"
    );
    let withdrawn = elicit_tests::history(frontend.connection()).await;
    let reasons: Vec<&str> = withdrawn
        .iter()
        .take(2)
        .filter_map(|h| h["reason"].as_str())
        .collect();
    assert_eq!(reasons, ["cancelled", "cancelled"], "{withdrawn:?}");
}

/// One of the two calls cancelled: form B may serve the other, which still
/// runs, so both forms stay; cancelling the other then withdraws both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_form_stays_while_one_request_it_may_serve_runs() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy(&bus);
    let a = two_calls_two_forms(&bus, &mut host, &mut frontend).await;
    host.send(cancel(json!(11))).await;
    // Withdrawals take milliseconds (the test above): a second of quiet
    // shows none is coming.
    let event = frontend.next_within(Duration::from_secs(1)).await;
    assert!(event.is_none(), "nothing withdrawn while call 10 runs: {event:?}");
    assert_eq!(broker_forms(&bus).await, 2, "A and B are still there");
    host.send(cancel(json!(10))).await;
    let (form, reason) = frontend.next_withdraw().await;
    assert_eq!((form, reason.as_str()), (a.form, "cancelled"));
    eventually("B withdrawn with its last owner", || async {
        broker_forms(&bus).await == 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_cancelled_by_the_host_withdraws_its_round() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy(&bus);
    host.send(json!({"jsonrpc": "2.0", "id": "r", "method": "tools/call",
        "params": {"name": "two_forms", "arguments": {},
                   "_meta": meta2026(json!({"progressToken": "pr"}))}}))
        .await;
    let shown = frontend.next_show().await;
    loop {
        if is_progress_for(&host.recv().await, "pr") {
            break;
        }
    }
    host.send(cancel(json!("r"))).await;
    let (form, reason) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);
    assert_eq!(reason, "cancelled");
    eventually("the round's second form withdrawn too", || async {
        broker_forms(&bus).await == 0
    })
    .await;
    no_progress_for(&mut host, "pr", Duration::from_millis(5 * KEEPALIVE_MS)).await;
}

/// The server's own message, sent through the scripted server's `send`;
/// the proxy's answer, as the server got it.
async fn server_sends(host: &mut Host, call: i64, message: Value) -> Value {
    host.call(
        call,
        "tools/call",
        json!({"name": "send", "arguments": {"message": message}}),
    )
    .await;
    let id = message["id"].clone();
    loop {
        let m = host.recv().await;
        if m["method"] == "test/got" && m["params"]["line"]["id"] == id {
            return m["params"]["line"].clone();
        }
    }
}

/// A task-augmented elicitation is a task of the proxy's: created at once
/// and `input_required` while the form waits; the server's `tasks/cancel`
/// withdraws the form (reason `cancelled`), after which the task is
/// `cancelled` and a second cancel is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_tasks_cancel_withdraws_the_form_of_its_task() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy(&bus);
    let form = json!({"message": "Your name?", "task": {"ttl": 60000},
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
    let created = server_sends(
        &mut host,
        1,
        json!({"jsonrpc": "2.0", "id": "t-1", "method": "elicitation/create", "params": form}),
    )
    .await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a CreateTaskResult: {created}"))
        .to_owned();
    assert_eq!(created["result"]["task"]["ttl"], 60000);
    let shown = frontend.next_show().await;
    let get = json!({"jsonrpc": "2.0", "id": "g-1", "method": "tasks/get", "params": {"taskId": task}});
    let got = server_sends(&mut host, 2, get).await;
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    let listed = server_sends(
        &mut host,
        3,
        json!({"jsonrpc": "2.0", "id": "l-1", "method": "tasks/list"}),
    )
    .await;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], task.as_str(), "{listed}");

    let cancel = json!({"jsonrpc": "2.0", "id": "c-1", "method": "tasks/cancel", "params": {"taskId": task}});
    let cancelled = server_sends(&mut host, 4, cancel.clone()).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let (form, reason) = frontend.next_withdraw().await;
    assert_eq!(form, shown.form);
    assert_eq!(reason, "cancelled");
    let mut again = cancel;
    again["id"] = json!("c-2");
    let refused = server_sends(&mut host, 5, again).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}
