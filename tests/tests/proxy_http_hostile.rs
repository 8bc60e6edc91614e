//! `elicit proxy --url` against a hostile HTTP server
//! (tests/peers/python/hostile_http.py): garbage events, an endless event,
//! a 1 GB body, a redirect to another host, an error page. Each gets the
//! host a JSON-RPC error that names what happened, the proxy's memory
//! stays bounded, it keeps serving, and a token given to it never shows in
//! its output.

use std::process::Stdio;

use elicit_tests::mcp::{Host, V2025, peers};
use elicit_tests::{binary, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The token the tests hand the proxy; it must appear nowhere.
const TOKEN: &str = "tok-5f0c1d-never-print-me";

/// The hostile server and the base of its address.
async fn hostile() -> (Child, String) {
    let mut server = Command::new("python3")
        .arg(peers().join("python/hostile_http.py"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start hostile_http.py");
    let stdout = server.stdout.take().expect("stdout");
    let line = within("the hostile server's address", async {
        BufReader::new(stdout).lines().next_line().await
    })
    .await
    .expect("read")
    .expect("a line");
    let base = line
        .strip_prefix("listening on ")
        .expect("its address")
        .to_owned();
    (server, base)
}

/// `elicit proxy --url URL`, its stderr captured, a token in its headers.
fn proxy(url: &str) -> Host {
    let mut command = Command::new(binary("elicit"));
    command
        .args([
            "--bus",
            "unix:path=/nonexistent",
            "proxy",
            "--no-broker",
            "decline",
        ])
        .args(["--header-env", "Authorization=ELICIT_TEST_TOKEN"])
        .args(["--url", url])
        .env("ELICIT_TEST_TOKEN", format!("Bearer {TOKEN}"))
        .env("ELICIT_LOG", "trace")
        .stderr(Stdio::piped());
    Host::spawn(command)
}

/// Sends `initialize` (id 1) and `ping` (id 2); returns both answers.
async fn two_requests(host: &mut Host) -> (Value, Value) {
    host.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": V2025, "capabilities": {}, "clientInfo": {"name": "hostile-test", "version": "1"}}}))
        .await;
    let first = host.recv().await;
    host.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let second = host.recv().await;
    (first, second)
}

/// The peak resident memory of `pid`, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// Runs one misbehaviour: both requests fail with an error naming
/// `expected`, the proxy stays under `peak_mib`, exits 0 when the host
/// leaves, and its stderr never shows the token.
async fn refused(path: &str, expected: &str, peak_mib: u64) {
    let (_server, base) = hostile().await;
    let mut host = proxy(&format!("{base}/{path}"));
    let (first, second) = two_requests(&mut host).await;
    for (answer, id) in [(&first, 1), (&second, 2)] {
        assert_eq!(answer["id"], id, "{path}: the answer to request {id}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(expected),
            "{path}: request {id} should fail naming `{expected}`: {answer}"
        );
    }
    let pid = host.child.id().expect("running");
    let peak = peak_kib(pid) / 1024;
    assert!(
        peak <= peak_mib,
        "{path}: the proxy peaked at {peak} MiB (bound {peak_mib})"
    );
    host.close_stdin();
    assert_eq!(
        host.exit_code().await,
        Some(0),
        "{path}: the proxy exits 0 when the host leaves"
    );
    let mut stderr = String::new();
    if let Some(mut pipe) = host.child.stderr.take() {
        use tokio::io::AsyncReadExt;
        pipe.read_to_string(&mut stderr).await.expect("stderr");
    }
    assert!(
        !stderr.contains(TOKEN),
        "{path}: the token leaked to stderr:\n{stderr}"
    );
    assert!(!first.to_string().contains(TOKEN) && !second.to_string().contains(TOKEN));
}

#[tokio::test]
async fn garbage_events_end_in_an_error_naming_the_stream() {
    refused("garbage", "event stream ended before its response", 100).await;
}

#[tokio::test]
async fn an_endless_event_is_cut_at_the_cap() {
    refused("endless", "over 67108864 bytes", 200).await;
}

#[tokio::test]
async fn a_1_gb_body_is_cut_at_the_cap() {
    refused("huge", "over 67108864 bytes", 200).await;
}

#[tokio::test]
async fn a_redirect_to_another_host_is_refused() {
    refused("elsewhere", "refused a redirect to another host (127.0.0.2)", 100).await;
}

#[tokio::test]
async fn an_error_page_reaches_the_host_as_its_text() {
    refused("broken", "HTTP 500: the database is on fire", 100).await;
}

#[tokio::test]
async fn an_unreachable_server_is_named() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("port").port();
    drop(listener);
    let mut host = proxy(&format!("http://127.0.0.1:{port}/mcp?key={TOKEN}"));
    let (first, _) = two_requests(&mut host).await;
    let message = first["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("cannot reach http://127.0.0.1:{port}/mcp")),
        "{first}"
    );
    assert!(
        !message.contains(TOKEN),
        "the query's key is not shown: {message}"
    );
}
