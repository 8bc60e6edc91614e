//! What a hostile caller tries against `elicit serve` (issue 28): headers
//! that disagree with the body, other local users, and bodies that add up
//! to more memory than the server may take.
//!
//! A test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use std::process::Stdio;

use elicit_tests::http::serve;
use elicit_tests::mcp::{peers, python, system};
use elicit_tests::within;
use serde_json::{Value, json};
use tokio::process::Command;

/// One raw request through `http_probe.py`, run by `runner` (e.g.
/// `setpriv …`, or nothing): `{status, headers, body}`, the body parsed
/// when it is JSON.
async fn probe_as(
    runner: &[&str],
    method: &str,
    url: &str,
    headers: &[String],
    body: Option<&Value>,
) -> Value {
    let mut argv: Vec<String> = runner.iter().map(|s| s.to_string()).collect();
    argv.extend([
        "python3".to_owned(),
        peers().join("python/http_probe.py").display().to_string(),
    ]);
    argv.extend([method.to_owned(), url.to_owned()]);
    argv.extend(headers.iter().cloned());
    if let Some(body) = body {
        argv.extend(["--body".to_owned(), body.to_string()]);
    }
    let output = within(
        "http_probe.py",
        Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("run http_probe.py");
    let mut answer: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(
        |_| json!({"status": 0, "error": String::from_utf8_lossy(&output.stderr).into_owned()}),
    );
    if let Some(text) = answer["body"].as_str()
        && let Ok(parsed) = serde_json::from_str::<Value>(text)
    {
        answer["body"] = parsed;
    }
    answer
}

fn command_args(flags: &[&str], server: &[String]) -> Vec<String> {
    let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    args.push("--".into());
    args.extend(server.iter().cloned());
    args
}

/// `book` and `no_such_tool` as the spec's `=?base64?…?=` sentinel
/// (`printf book | base64`).
const BOOK_ENCODED: &str = "=?base64?Ym9vaw==?=";
const NO_SUCH_TOOL_ENCODED: &str = "=?base64?bm9fc3VjaF90b29s?=";

/// A 2026-07-28 `tools/call` of `tool` with routing headers naming
/// `header_name`.
async fn call_with_name(url: &str, tool: &str, header_name: &str) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": tool, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        "Content-Type: application/json".to_owned(),
        "Accept: application/json".to_owned(),
        "MCP-Protocol-Version: 2026-07-28".to_owned(),
        "Mcp-Method: tools/call".to_owned(),
        format!("Mcp-Name: {header_name}"),
    ];
    probe_as(&[], "POST", url, &headers, Some(&request)).await
}

/// A base64 `Mcp-Name` is decoded and compared with the body like a plain
/// one: it used to skip the check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base64_mcp_name_must_match_the_body() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let served = serve(bus.address(), &command_args(&[], &server)).await;

    let answer = call_with_name(&served.url, "no_such_tool", BOOK_ENCODED).await;
    assert_eq!(answer["status"], 400, "{answer}");
    assert_eq!(answer["body"]["error"]["code"], -32020, "{answer}");
    assert_eq!(answer["body"]["id"], 7, "{answer}");

    let answer = call_with_name(&served.url, "no_such_tool", "=?base64?!!!?=").await;
    assert_eq!(answer["status"], 400, "not base64: {answer}");
    assert_eq!(answer["body"]["error"]["code"], -32020, "{answer}");

    // The same name, encoded, passes the check and reaches the server,
    // which knows no such tool.
    let answer = call_with_name(&served.url, "no_such_tool", NO_SUCH_TOOL_ENCODED).await;
    assert_eq!(answer["status"], 200, "{answer}");
    let text = answer["body"].to_string();
    assert!(text.contains("no_such_tool"), "{answer}");
}

/// The largest the server's memory may grow under the attack below: the
/// body budget (128 MiB) and the copies each admitted message is made
/// into while the relay reads it (parsed, then serialized). It reached
/// 2.6 GiB before the budget.
const BODIES_RSS_BOUND_KIB: u64 = 512 * 1024;

/// The peak resident set of `pid` (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

/// 12 concurrent 63 MiB bodies, each under the per-body limit: the shared
/// budget admits what it can hold and refuses the rest (503, or the
/// connection closed under a body it will not read), and serve's peak
/// memory stays under [`BODIES_RSS_BOUND_KIB`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_large_bodies_stay_within_the_budget() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let served = serve(bus.address(), &command_args(&[], &server)).await;
    let pid = served.child.id().expect("elicit serve runs");
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(240),
        Command::new("python3")
            .arg(peers().join("python/big_bodies.py"))
            .args([served.url.as_str(), "12", "63"])
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the 12 bodies to be answered within 240 s")
    .expect("run big_bodies.py");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("big_bodies.py prints JSON");
    let statuses: Vec<u64> = answer["statuses"]
        .as_array()
        .expect("statuses")
        .iter()
        .map(|s| s.as_u64().unwrap_or(0))
        .collect();
    let peak = peak_rss_kib(pid);
    eprintln!(
        "statuses {statuses:?}; elicit serve's peak RSS {} MiB",
        peak / 1024
    );
    assert!(statuses.contains(&200), "some bodies are served: {statuses:?}");
    assert!(
        statuses.iter().all(|s| [200, 503, 0].contains(s)),
        "served, refused or cut off: {statuses:?}"
    );
    assert!(
        peak < BODIES_RSS_BOUND_KIB,
        "peak RSS {} MiB is over {} MiB",
        peak / 1024,
        BODIES_RSS_BOUND_KIB / 1024
    );
    // The budget was given back: a small request goes through.
    let answer = call_with_name(&served.url, "no_such_tool", "no_such_tool").await;
    assert_eq!(answer["status"], 200, "{answer}");
}
