//! `elicit proxy` as real hosts run it (issue 16): a host that dies
//! mid-form, servers started through `npx`, a session with several forms
//! at once, a host that strips the environment, no broker at all, and
//! answers that leave out fields with defaults.
//!
//! The hosts are the Python `mcp` package's `stdio_client` (tests/peers/
//! python/host.py) and this test writing JSON-RPC lines; the servers are
//! server-everything from npm (directly and through `npx --no-install`)
//! and the scripted fake server.

use std::path::Path;
use std::time::{Duration, Instant};

use elicit_tests::http::client_scenario;
use elicit_tests::mcp::{Host, PyHost, everything, fake, meta2026, missing, peers, text_of};
use elicit_tests::procs::{children_of, group_members, kill, processes, servers_of};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, binary, eventually, within};
use serde_json::{Value, json};
use tokio::process::Command;

/// The grace the proxies here get, so that a test sees the whole TERM,
/// KILL sequence quickly.
const GRACE_MS: u64 = 500;

/// The Python host and its `mcp` package, or the reason to skip.
fn python_host() -> Option<()> {
    if peers().join("python/site/mcp").exists() {
        Some(())
    } else {
        missing("the Python `mcp` package")
    }
}

/// `npx --no-install mcp-server-everything stdio`, run in the peers'
/// node folder, as the README's examples start it.
fn everything_through_npx() -> Option<Vec<String>> {
    everything()?;
    Some(vec![
        "npx".into(),
        "--no-install".into(),
        "mcp-server-everything".into(),
        "stdio".into(),
    ])
}

fn node_dir() -> String {
    peers().join("node").display().to_string()
}

/// `elicit --bus BUS ARGS…`, its stdout and exit code.
async fn elicit(bus: &PrivateBus, args: &[&str]) -> (String, Option<i32>) {
    let output = Command::new(binary("elicit"))
        .arg("--bus")
        .arg(bus.address())
        .args(args)
        .output();
    let output = within("elicit to finish", output).await.expect("elicit runs");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code(),
    )
}

/// The broker's pending forms (`elicit list --json`).
async fn pending(bus: &PrivateBus) -> Vec<Value> {
    let (text, code) = elicit(bus, &["list", "--json"]).await;
    assert_eq!(code, Some(0), "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

async fn system() -> (PrivateBus, Daemon, TestFrontend) {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let frontend = TestFrontend::register(&bus, "script", 0).await;
    (bus, daemon, frontend)
}

// ------------------------------------------------- 1. the host is the end

#[derive(Debug, Clone, Copy)]
enum Death {
    /// `kill -9` of the host: its pipes close, nothing else.
    HostKilled,
    /// `kill -TERM` of the host (Python dies without its cleanup).
    HostTerminated,
    /// The host stops the server the usual way: TERM to the proxy.
    ProxyTerminated,
}

/// The host dies mid-form; the form is withdrawn within a second as
/// `client-gone`, and after the grace periods nothing of the server's
/// process tree is left.
async fn host_dies_mid_form(server: Vec<String>, death: Death) {
    let (bus, _daemon, mut frontend) = system().await;
    let mut args: Vec<String> = vec![
        "--cwd".into(),
        node_dir(),
        "trigger-elicitation-request".into(),
        "--".into(),
    ];
    args.push(binary("elicit").display().to_string());
    args.extend(["--bus".into(), bus.address().to_owned(), "proxy".into()]);
    args.extend(["--exit-grace-ms".into(), GRACE_MS.to_string(), "--".into()]);
    args.extend(server.iter().cloned());
    // npx and the script it starts run on the pinned node, first on PATH.
    let path = elicit_tests::node::node_path().unwrap_or_default();
    let mut host = PyHost::start(&args, &[("PATH", Path::new(&path))]);
    host.event("ready").await;
    let shown = frontend.next_show().await;

    let proxy = children_of(host.pid());
    assert_eq!(proxy.len(), 1, "the host runs one proxy: {proxy:?}");
    let proxy = proxy[0];
    let leader = servers_of(proxy);
    assert_eq!(leader.len(), 1, "the proxy runs one server: {leader:?}");
    let group = leader[0];
    let tree = group_members(group);
    assert!(
        tree.contains(&group),
        "the server leads a group of its own: {tree:?}"
    );
    if server[0] == "npx" {
        assert!(tree.len() >= 2, "npx starts the real server beside it: {tree:?}");
    }

    let died = Instant::now();
    match death {
        Death::HostKilled => kill("-KILL", host.pid()),
        Death::HostTerminated => kill("-TERM", host.pid()),
        Death::ProxyTerminated => kill("-TERM", proxy),
    }
    let (form, reason) = frontend.next_withdraw().await;
    let withdrawn = died.elapsed();
    assert_eq!(form, shown.form);
    assert_eq!(reason, "client-gone", "{death:?}");
    assert!(
        withdrawn < Duration::from_secs(1),
        "{death:?}: withdrawn after {withdrawn:?}"
    );

    eventually("the server's whole process group to end", || async {
        group_members(group).is_empty()
    })
    .await;
    let ended = died.elapsed();
    // Closing, TERM and KILL each get the grace; the tree is gone by then.
    assert!(
        ended < Duration::from_millis(3 * GRACE_MS + 1000),
        "{death:?}: the tree ended after {ended:?}"
    );
    eventually("the proxy to exit", || async {
        !processes().iter().any(|(pid, _, _)| *pid == proxy)
    })
    .await;
    eprintln!(
        "{} {death:?}: form withdrawn after {withdrawn:?}, process tree gone after {ended:?}",
        server[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dying_host_ends_the_form_and_the_npx_started_tree() {
    let (Some(server), Some(())) = (everything_through_npx(), python_host()) else {
        return;
    };
    for death in [Death::HostKilled, Death::HostTerminated, Death::ProxyTerminated] {
        host_dies_mid_form(server.clone(), death).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dying_host_ends_the_form_and_the_node_server() {
    let (Some(server), Some(())) = (everything(), python_host()) else {
        return;
    };
    for death in [Death::HostKilled, Death::HostTerminated, Death::ProxyTerminated] {
        host_dies_mid_form(server.clone(), death).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_exits_with_the_servers_status_after_ending_its_group() {
    let bus = PrivateBus::start();
    // `sh -c` leaves a child behind that ignores TERM and holds the
    // output: the proxy ends it, and still exits with the server's status.
    let script = "trap '' TERM; (trap '' TERM; sleep 300) & read line; exit 7";
    // `read` returns at the EOF the closed input gives, and sh exits 7.
    let command = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
    let grace = GRACE_MS.to_string();
    let mut host = Host::proxy(bus.address(), &["--exit-grace-ms", &grace], &command);
    let proxy = host.child.id().expect("pid");
    let group = eventually_one_child(proxy).await;
    eventually("sh to start its child", || async {
        group_members(group).len() == 2
    })
    .await;
    host.close_stdin();
    assert_eq!(
        host.exit_code().await,
        Some(7),
        "the proxy exits with the server's status"
    );
    assert!(
        group_members(group).is_empty(),
        "the sleeping child was ended too"
    );
}

async fn eventually_one_child(parent: u32) -> u32 {
    let mut found = 0;
    eventually("the proxy's server to start", || {
        let children = servers_of(parent);
        found = children.first().copied().unwrap_or(0);
        async move { !children.is_empty() }
    })
    .await;
    found
}

// ---------------------------------------- 2. every form in the daemon's queue

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_legacy_forms_are_all_queued_and_survive_a_restart() {
    // No front-end: both forms wait, queued, where `elicit list` sees them.
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    for id in [1, 2] {
        host.call(id, "tools/call", json!({"name": "ask", "arguments": {}}))
            .await;
    }
    eventually("both forms in the broker's queue", || async {
        pending(&bus).await.len() == 2
    })
    .await;
    let forms = pending(&bus).await;
    assert!(forms.iter().all(|f| f["state"] == "queued"), "{forms:?}");
    let (table, _) = elicit(&bus, &["list"]).await;
    assert_eq!(table.matches("queued").count(), 2, "{table}");

    daemon.restart().await;
    let after = pending(&bus).await;
    assert_eq!(after.len(), 2, "a restart loses none: {after:?}");
    let mut ids: Vec<u64> = after.iter().filter_map(|f| f["id"].as_u64()).collect();
    ids.sort_unstable();
    for (id, name) in ids.iter().zip(["first", "second"]) {
        let answer = json!({"name": name}).to_string();
        let (out, code) = elicit(&bus, &["answer", &id.to_string(), "--accept", &answer]).await;
        assert_eq!(code, Some(0), "{out}");
    }
    // The server gets each answer under the id it asked with, in order.
    for (asked, name) in [("e-1", "first"), ("e-2", "second")] {
        loop {
            let got = host.recv().await;
            if got["method"] == "test/got" && got["params"]["line"]["id"] == asked {
                assert_eq!(got["params"]["line"]["result"]["content"]["name"], name, "{got}");
                break;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_forms_of_one_2026_round_are_queued_at_once_and_shown_in_order() {
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    host.send(json!({"jsonrpc": "2.0", "id": "r", "method": "tools/call",
        "params": {"name": "two_forms", "arguments": {}, "_meta": meta2026(json!({}))}}))
        .await;
    let first = frontend.next_show().await;
    assert_eq!(first.request["message"], "Your name?");
    eventually("both forms of the round in the queue", || async {
        pending(&bus).await.len() == 2
    })
    .await;
    let mut states: Vec<String> = pending(&bus)
        .await
        .iter()
        .map(|f| f["state"].as_str().unwrap_or_default().to_owned())
        .collect();
    states.sort();
    assert_eq!(states, ["presented", "queued"]);
    assert!(frontend.is_idle(), "one form at a time");
    frontend
        .answer(&first, "accept", json!({"name": "A"}))
        .await
        .expect("answer");
    let second = frontend.next_show().await;
    assert_eq!(second.request["message"], "Your other name?");
    frontend
        .answer(&second, "accept", json!({"name": "B"}))
        .await
        .expect("answer");
    let (result, _) = host.response(json!("r")).await;
    let answers: Value = serde_json::from_str(&text_of(&result)).expect("the server's echo");
    assert_eq!(answers["first"]["content"]["name"], "A");
    assert_eq!(answers["second"]["content"]["name"], "B");
}

// ------------------------------------ 3. a host that strips the environment

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_host_with_its_default_environment_finds_the_broker() {
    let (Some(server), Some(())) = (everything(), python_host()) else {
        return;
    };
    // The bus lives at an arbitrary path; the daemon records it under its
    // $HOME (the harness gives it the bus's folder), the host passes only
    // HOME, PATH and a few more to the proxy.
    let (bus, daemon, mut frontend) = system().await;
    eventually("the daemon's record", || async {
        elicit_tests::bus_records(bus.dir())
            .iter()
            .any(|(_, address)| address == bus.address())
    })
    .await;
    let record = elicit_tests::bus_records(bus.dir())
        .into_iter()
        .find(|(_, address)| address == bus.address())
        .map(|(path, _)| path)
        .expect("the record");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&record).expect("stat").permissions());
    assert_eq!(mode & 0o777, 0o600, "the record is the user's alone");

    let mut args: Vec<String> = vec!["trigger-elicitation-request".into(), "--".into()];
    args.push(binary("elicit").display().to_string());
    args.push("proxy".into());
    args.push("--".into());
    args.extend(server);
    let mut host = PyHost::start(
        &args,
        &[
            ("HOME", bus.dir()),
            ("DBUS_SESSION_BUS_ADDRESS", Path::new("unix:path=/nonexistent")),
        ],
    );
    host.event("ready").await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"name": "Grace Hopper"}))
        .await
        .expect("accept");
    let (result, _) = host.event("result").await;
    let text = result["text"].as_str().unwrap_or_default();
    assert!(text.contains("- Name: Grace Hopper"), "{result}");

    // The record goes when the daemon stops.
    kill("-TERM", daemon.pid().expect("pid"));
    eventually("the record to be removed", || async { !record.exists() }).await;
}

// ------------------------------------------ 4. honest outcome with no broker

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_broker_the_form_is_cancelled_and_the_host_is_told() {
    let Some(()) = python_host() else { return };
    // A bus without elicitd on it.
    let bus = PrivateBus::start();
    let mut args: Vec<String> = vec!["book".into(), "--".into()];
    args.push(binary("elicit").display().to_string());
    args.extend([
        "--bus".into(),
        bus.address().to_owned(),
        "proxy".into(),
        "--".into(),
    ]);
    // The server needs the mcp package, which the host's filtering drops.
    args.push("env".into());
    args.push(format!("PYTHONPATH={}", peers().join("python/site").display()));
    args.extend([
        "python3".into(),
        peers().join("python/elicit_server.py").display().to_string(),
    ]);
    let mut host = PyHost::start(&args, &[]);
    let (result, before) = host.event("result").await;
    let text = result["text"].as_str().unwrap_or_default();
    assert!(text.contains("not booked: cancel"), "nobody declined: {result}");
    let logged = before.iter().any(|e| {
        e["event"] == "log"
            && e["level"] == "warning"
            && e["data"].as_str().is_some_and(|d| d.contains("nobody was asked"))
    });
    assert!(logged, "the host gets a log message: {before:?}");

    // 2026-07-28: the tool result itself says so.
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    host.send(json!({"jsonrpc": "2.0", "id": "r", "method": "tools/call",
        "params": {"name": "two_forms", "arguments": {}, "_meta": meta2026(json!({}))}}))
        .await;
    let (result, before) = host.response(json!("r")).await;
    let text = text_of(&result);
    assert!(text.contains(r#""action": "cancel""#), "{text}");
    assert!(text.contains("nobody was asked"), "{text}");
    assert!(
        before.iter().any(|m| m["method"] == "notifications/message"),
        "{before:?}"
    );
}

/// A host that declared elicitation gets the form when elicitd cannot be
/// reached, and is told so as a log message first: Claude Code in print
/// mode declares elicitation and cancels every form itself, and it pipes
/// the proxy's standard error where nobody sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_broker_a_host_that_elicits_gets_the_form_and_a_warning() {
    // A bus without elicitd on it.
    let bus = PrivateBus::start();
    // HOME is the bus's folder, which holds no discovery record: the
    // proxy must not find another test's broker through the user's.
    let mut command = Command::new(binary("elicit"));
    command
        .args(["--bus", bus.address(), "proxy", "--"])
        .args(fake(&[]))
        .env("HOME", bus.dir());
    let mut host = Host::spawn(command);
    // The fake server answers no initialize; the proxy learns what the
    // host declared from the request itself.
    host.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "print-mode-host", "version": "1"}}}))
        .await;
    host.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ask_and_wait", "arguments": {}}}))
        .await;
    let mut warned_first = None;
    let mut warned = false;
    loop {
        let message = host.recv().await;
        if message["method"] == "notifications/message" {
            let data = message["params"]["data"].as_str().unwrap_or_default();
            warned |= message["params"]["level"] == "warning" && data.contains("elicitd cannot be reached");
        } else if message["method"] == "elicitation/create" {
            warned_first.get_or_insert(warned);
            host.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {"action": "cancel"}}))
                .await;
        } else if message["id"] == json!(1) {
            break;
        }
    }
    assert_eq!(
        warned_first,
        Some(true),
        "the host is warned before the form reaches it"
    );
}

// --------------------------------------------- 5. defaults for every answerer

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_answer_gets_the_schema_defaults_and_a_url_accept_no_content() {
    let Some(server) = everything() else { return };
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;
    host.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"trigger-elicitation-request","arguments":{}}}))
        .await;
    let id = one_pending(&bus).await;
    let (out, code) = elicit(&bus, &["answer", &id, "--accept", r#"{"name": "Ada"}"#]).await;
    assert_eq!(code, Some(0), "{out}");
    let (result, _) = host.response(json!(1)).await;
    let text = text_of(&result);
    assert!(
        text.contains("- Name: Ada")
            && text.contains("Favorite Integer: 42")
            && text.contains("Favorite Number: 3.14"),
        "the omitted fields arrive with their defaults: {text}"
    );

    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    host.call(2, "tools/call", json!({"name": "ask_url", "arguments": {}}))
        .await;
    let id = one_pending(&bus).await;
    let (out, code) = elicit(&bus, &["answer", &id, "--accept", "{}"]).await;
    assert_eq!(code, Some(0), "{out}");
    loop {
        let got = host.recv().await;
        if got["method"] == "test/got" && got["params"]["line"]["id"] == "e-2" {
            let result = &got["params"]["line"]["result"];
            assert_eq!(result["action"], "accept", "{got}");
            assert!(
                result.get("content").is_none(),
                "a URL accept carries no content: {got}"
            );
            break;
        }
    }
}

async fn one_pending(bus: &PrivateBus) -> String {
    eventually("a form in the queue", || async { pending(bus).await.len() == 1 }).await;
    pending(bus).await[0]["id"].to_string()
}

/// The conformance suite's `elicitation-sep1034-client-defaults` (pinned
/// in tests/peers/node, run with its Node 22), through fastmcp's
/// stdio-to-HTTP bridge behind the stdio proxy, answered by a script that
/// sends `{}`: every default must arrive. (tests/proxy_http.rs runs it with
/// `elicit proxy --url` as the HTTP client.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_sep1034_defaults_pass_with_a_scripted_answerer() {
    if !peers().join("python/site/fastmcp").exists() {
        return missing("the Python `fastmcp` package").unwrap_or(());
    }
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let scenario = "elicitation-sep1034-client-defaults";
    // The proxy's standard error, the bridge's with it, goes to a file: the
    // suite shows a client's output only when it exits with an error, and
    // fastmcp's bridge, when it cannot reach the server, only logs it and
    // lists no tools, so that the host exits cleanly having called none.
    let logs = tempfile::tempdir().expect("temp dir");
    let stderr = logs.path().join("proxy.stderr");
    let env = [
        ("BRIDGE", "fastmcp"),
        ("PROXY_STDERR", stderr.to_str().expect("a UTF-8 path")),
    ];
    let Some(run) = client_scenario(&bus, scenario, &env).await else {
        return;
    };
    assert!(
        run.text.contains("Passed: 5/5, 0 failed"),
        "the scenario failed:\n{}\n--- the proxy's and the bridge's standard error:\n{}",
        run.text,
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
}
