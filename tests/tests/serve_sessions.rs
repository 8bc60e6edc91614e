//! `elicit serve`'s 2025-era sessions end when their host does, though
//! the host never says so: the TypeScript SDK's `close()` sends no DELETE,
//! and a host killed mid-form cannot. The idle periods are set short with
//! `--session-idle` and `--session-idle-pending`; every wait has a deadline.
//!
//! A test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use std::process::Stdio;
use std::time::{Duration, Instant};

use elicit_tests::http::{host_event, python_http_host, serve};
use elicit_tests::mcp::{missing, peers, python, system};
use elicit_tests::procs::{children_of, kill};
use elicit_tests::{eventually, list_forms, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// A host on the TypeScript SDK (`tests/peers/node/sdk_http_host.mjs`):
/// connects, calls `tool` (or lists the tools), then `close()`s.
fn sdk_host(url: &str, tool: Option<&str>) -> Option<(Child, Lines<BufReader<ChildStdout>>)> {
    let sdk = peers().join("node/node_modules/@modelcontextprotocol/sdk/package.json");
    if !sdk.exists() {
        return missing("@modelcontextprotocol/sdk (npm)");
    }
    let node = elicit_tests::node::node()?;
    let mut child = Command::new(node)
        .arg(peers().join("node/sdk_http_host.mjs"))
        .arg(url)
        .args(tool)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start node sdk_http_host.mjs");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    Some((child, lines))
}

/// Runs the SDK host to its end (tools listed, `close()`d); its session id.
async fn run_sdk_host(url: &str) -> Option<String> {
    let (mut child, mut lines) = sdk_host(url, None)?;
    let ready = host_event(&mut lines, "ready").await;
    let result = host_event(&mut lines, "result").await;
    assert!(
        result["text"].as_str().unwrap_or_default().contains("book"),
        "{result}"
    );
    host_event(&mut lines, "closed").await;
    let status = within("the SDK host to exit", child.wait()).await.expect("wait");
    assert!(status.success(), "sdk_http_host.mjs: {status}");
    Some(ready["session"].as_str().expect("a session id").to_owned())
}

/// The HTTP status of a `tools/list` in session `session` (404: it ended).
async fn status_in(url: &str, session: &str) -> u16 {
    let output = within(
        "http_probe.py",
        Command::new("python3")
            .arg(peers().join("python/http_probe.py"))
            .args(["POST", url])
            .arg("Content-Type: application/json")
            .arg("Accept: application/json, text/event-stream")
            .arg("MCP-Protocol-Version: 2025-11-25")
            .arg(format!("Mcp-Session-Id: {session}"))
            .arg("--body")
            .arg(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string())
            .output(),
    )
    .await
    .expect("run http_probe.py");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("http_probe.py prints JSON");
    answer["status"].as_u64().unwrap_or(0) as u16
}

fn args(flags: &[&str], server: &[String]) -> Vec<String> {
    let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    args.push("--".into());
    args.extend(server.iter().cloned());
    args
}

/// The SDK's `close()` sends no DELETE: the session ends once it has had
/// no client for `--session-idle`, and its server with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_never_deletes_has_its_session_ended() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let served = serve(bus.address(), &args(&["--session-idle", "1"], &server)).await;
    let Some(session) = run_sdk_host(&served.url).await else {
        return;
    };
    let pid = served.child.id().expect("elicit serve runs");
    assert_eq!(
        children_of(pid).len(),
        1,
        "the session's server runs after close()"
    );
    let left = Instant::now();
    eventually("the idle session's server to end", || async move {
        children_of(pid).is_empty()
    })
    .await;
    eprintln!(
        "the session and its server ended {:?} after the host left",
        left.elapsed()
    );
    assert_eq!(status_in(&served.url, &session).await, 404, "the session is gone");
}

/// A full table ends the longest-idle session rather than refusing new
/// hosts (it refused every host after 32 runs of the SDK host).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_table_evicts_the_longest_idle_session() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let served = serve(bus.address(), &args(&["--max-sessions", "2"], &server)).await;
    let mut sessions = Vec::new();
    for _ in 0..4 {
        let Some(session) = run_sdk_host(&served.url).await else {
            return;
        };
        sessions.push(session);
    }
    let pid = served.child.id().expect("elicit serve runs");
    eventually("the evicted sessions' servers to end", || async move {
        children_of(pid).len() == 2
    })
    .await;
    assert_eq!(
        status_in(&served.url, &sessions[0]).await,
        404,
        "the oldest went first"
    );
    assert_eq!(status_in(&served.url, &sessions[1]).await, 404);
    assert_eq!(
        status_in(&served.url, &sessions[3]).await,
        200,
        "the newest stays"
    );
}

/// A host killed while its form is open: with no stream left to answer
/// on, the session ends after `--session-idle-pending` and the form is
/// withdrawn as `client-gone`, for a host on either SDK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_killed_mid_form_has_its_form_withdrawn() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let served = serve(
        bus.address(),
        &args(&["--session-idle", "300", "--session-idle-pending", "1"], &server),
    )
    .await;
    let pid = served.child.id().expect("elicit serve runs");
    for sdk in ["typescript", "python"] {
        let (mut host, _lines) = match sdk {
            "typescript" => match sdk_host(&served.url, Some("book")) {
                Some(host) => host,
                None => return,
            },
            _ => python_http_host(&served.url, "legacy", "book"),
        };
        let shown = frontend.next_show().await;
        assert_eq!(shown.request["message"], "Which seat, and how many?", "{sdk}");
        kill("-KILL", host.id().expect("the host runs"));
        let _ = within("the killed host to be reaped", host.wait()).await;
        let killed = Instant::now();
        let (form, reason) = frontend.next_withdraw().await;
        let took = killed.elapsed();
        eprintln!("{sdk}: the form was withdrawn {took:?} after the host was killed");
        assert_eq!(form, shown.form, "{sdk}");
        assert_eq!(reason, "client-gone", "{sdk}");
        assert!(took < Duration::from_secs(20), "{sdk}: {took:?}");
        eventually("the session's server to end", || async move {
            children_of(pid).is_empty()
        })
        .await;
        let conn = frontend.connection().clone();
        assert!(list_forms(&conn).await.is_empty(), "{sdk}: no form left");
    }
}
