//! `elicit serve` in front of a server of ours on the Python `mcp`
//! package, reached by a real host on the same package over Streamable
//! HTTP that declares no elicitation: the broker's front-end answers.
//! Also the endpoint's refusals (DNS rebinding, bearer token, a
//! non-loopback address) and DELETE ending the server process.
//!
//! A test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use elicit_tests::http::{everything_over_http, host_event, python_http_host, python_http_server};
use elicit_tests::mcp::{everything, fake, peers, python, system};
use elicit_tests::procs::children_of;
use elicit_tests::{binary, eventually, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// A running `elicit serve` and the URL it printed.
struct Serve {
    child: Child,
    url: String,
    _stdout: Lines<BufReader<ChildStdout>>,
}

impl Serve {
    /// `elicit --bus BUS serve --listen 127.0.0.1:0 FLAGS -- COMMAND`,
    /// with `env` added to its environment.
    async fn start(bus: &str, flags: &[&str], command: &[String], env: &[(&str, &str)]) -> Serve {
        let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        args.push("--".into());
        args.extend(command.iter().cloned());
        Serve::start_with(bus, &args, env).await
    }

    /// `elicit --bus BUS serve --listen 127.0.0.1:0 ARGS`.
    async fn start_with(bus: &str, args: &[String], env: &[(&str, &str)]) -> Serve {
        let mut child = Command::new(binary("elicit"))
            .args(["--bus", bus, "serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("PYTHONPATH", peers().join("python/site"))
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start elicit serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let url = within("elicit serve to print its URL", stdout.next_line())
            .await
            .expect("read")
            .expect("elicit serve printed no URL");
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        Serve {
            child,
            url,
            _stdout: stdout,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("elicit serve runs")
    }

    /// The `host:port` part of the URL.
    fn authority(&self) -> &str {
        let rest = self.url.trim_start_matches("http://");
        rest.split('/').next().unwrap_or(rest)
    }
}

/// One raw request through `http_probe.py`: `{status, headers, body}`,
/// the body parsed when it is JSON.
async fn probe(method: &str, url: &str, headers: &[String], body: Option<&Value>) -> Value {
    let mut command = Command::new("python3");
    command
        .arg(peers().join("python/http_probe.py"))
        .args([method, url])
        .args(headers);
    if let Some(body) = body {
        command.arg("--body").arg(body.to_string());
    }
    let output = within("http_probe.py", command.output())
        .await
        .expect("run http_probe.py");
    assert!(
        output.status.success(),
        "http_probe.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut answer: Value = serde_json::from_slice(&output.stdout).expect("http_probe.py prints JSON");
    if let Some(text) = answer["body"].as_str()
        && let Ok(parsed) = serde_json::from_str::<Value>(text)
    {
        answer["body"] = parsed;
    }
    answer
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "serve-test", "version": "1"}}})
}

/// The headers of a JSON POST, plus `extra`.
fn post_headers(extra: &[&str]) -> Vec<String> {
    let mut headers = vec![
        "Content-Type: application/json".to_owned(),
        "Accept: application/json".to_owned(),
    ];
    headers.extend(extra.iter().map(|h| h.to_string()));
    headers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_host_without_elicitation_gets_the_brokered_answer() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let serve = Serve::start(bus.address(), &[], &server, &[]).await;

    let (_accepting, mut lines) = python_http_host(&serve.url, "legacy", "book");
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Which seat, and how many?");
    frontend
        .answer(&shown, "accept", json!({"seat": "12A", "count": 2}))
        .await
        .expect("accept");
    let result = host_event(&mut lines, "result").await;
    assert_eq!(result["text"], "booked 2 x 12A", "{result}");

    let (_declining, mut lines) = python_http_host(&serve.url, "legacy", "book");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("decline");
    let result = host_event(&mut lines, "result").await;
    assert_eq!(result["text"], "not booked: decline", "{result}");
}

/// `--upstream URL`: a remote server (the same tools over Streamable HTTP)
/// served with the same brokering, to a session host and a stateless one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_upstream_is_served_with_the_same_brokering() {
    let Some(remote) = python_http_server().await else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let serve = Serve::start_with(bus.address(), &["--upstream".into(), remote.url.clone()], &[]).await;
    for (mode, seat) in [("legacy", "4D"), ("auto", "5E")] {
        let (_host, mut lines) = python_http_host(&serve.url, mode, "book");
        let shown = frontend.next_show().await;
        assert_eq!(shown.request["message"], "Which seat, and how many?", "{mode}");
        frontend
            .answer(&shown, "accept", json!({"seat": seat, "count": 1}))
            .await
            .expect("accept");
        let result = host_event(&mut lines, "result").await;
        assert_eq!(result["text"], format!("booked 1 x {seat}"), "{mode}: {result}");
    }
}

/// server-everything behind `elicit serve`, as a stdio command and as an
/// upstream URL (its `streamableHttp`): its elicitation tool is brokered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_is_served_with_the_same_brokering() {
    let (Some(stdio), Some(remote)) = (everything(), everything_over_http().await) else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut upstream = vec!["--upstream".to_owned(), remote.url.clone()];
    let mut command = vec!["--".to_owned()];
    command.extend(stdio);
    for args in [&mut upstream, &mut command] {
        let serve = Serve::start_with(bus.address(), args, &[]).await;
        let (_host, mut lines) = python_http_host(&serve.url, "legacy", "trigger-elicitation-request");
        let shown = frontend.next_show().await;
        assert_eq!(
            shown.server.as_deref(),
            Some("mcp-servers/everything"),
            "{args:?}"
        );
        frontend
            .answer(
                &shown,
                "accept",
                json!({"name": "Ada Lovelace", "check": true, "integer": 7}),
            )
            .await
            .expect("accept");
        let result = host_event(&mut lines, "result").await;
        let text = result["text"].as_str().unwrap_or_default();
        assert!(text.contains("- Name: Ada Lovelace"), "{args:?}: {result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_2026_host_gets_the_brokered_answer() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let serve = Serve::start(bus.address(), &[], &server, &[]).await;

    // `auto` probes server/discover and, the server knowing 2026-07-28,
    // sends every request stateless: through the shared relay.
    let (_host, mut lines) = python_http_host(&serve.url, "auto", "book");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"seat": "3C", "count": 1}))
        .await
        .expect("accept");
    let result = host_event(&mut lines, "result").await;
    assert_eq!(result["text"], "booked 1 x 3C", "{result}");

    // A routing header that disagrees with the body is refused.
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call"]),
        Some(&request),
    )
    .await;
    assert_eq!(answer["status"], 400, "{answer}");
    assert_eq!(answer["body"]["error"]["code"], -32020, "{answer}");
    assert_eq!(answer["body"]["id"], 5, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_or_host_is_refused() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let serve = Serve::start(bus.address(), &[], &server, &[]).await;

    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&["Origin: http://evil.example"]),
        Some(&initialize()),
    )
    .await;
    assert_eq!(answer["status"], 403, "{answer}");
    let message = answer["body"]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Origin") && message.contains("evil.example"),
        "{answer}"
    );

    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&["Host: evil.example"]),
        Some(&initialize()),
    )
    .await;
    assert_eq!(answer["status"], 403, "{answer}");
    assert!(
        answer["body"]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Host"),
        "{answer}"
    );

    // The server's own names pass.
    let own_origin = format!("Origin: http://{}", serve.authority());
    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&[&own_origin]),
        Some(&initialize()),
    )
    .await;
    assert_eq!(answer["status"], 200, "{answer}");
    assert!(answer["headers"]["mcp-session-id"].is_string(), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_token_must_be_presented() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let runtime = tempfile::tempdir().expect("tempdir");
    let runtime_dir = runtime.path().display().to_string();
    let serve = Serve::start(
        bus.address(),
        &["--require-token"],
        &server,
        &[("XDG_RUNTIME_DIR", &runtime_dir)],
    )
    .await;
    let file = runtime.path().join("elicitd/serve-token");
    let mode = std::fs::metadata(&file)
        .expect("the token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the token is the user's alone");
    let token = std::fs::read_to_string(&file).expect("read the token");
    let token = token.trim();

    let answer = probe("POST", &serve.url, &post_headers(&[]), Some(&initialize())).await;
    assert_eq!(answer["status"], 401, "{answer}");
    assert_eq!(answer["headers"]["www-authenticate"], "Bearer", "{answer}");

    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&["Authorization: Bearer not-the-token"]),
        Some(&initialize()),
    )
    .await;
    assert_eq!(answer["status"], 401, "{answer}");

    let right = format!("Authorization: Bearer {token}");
    let answer = probe("POST", &serve.url, &post_headers(&[&right]), Some(&initialize())).await;
    assert_eq!(answer["status"], 200, "{answer}");
    assert_eq!(
        answer["body"]["result"]["serverInfo"]["name"], "elicit-test-server",
        "{answer}"
    );

    // An existing token through --token-file.
    let given = runtime.path().join("given-token");
    std::fs::write(&given, "s3cret\n").expect("write a token");
    let serve = Serve::start(
        bus.address(),
        &["--token-file", &given.display().to_string()],
        &server,
        &[],
    )
    .await;
    let answer = probe("POST", &serve.url, &post_headers(&[]), Some(&initialize())).await;
    assert_eq!(answer["status"], 401, "{answer}");
    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&["Authorization: Bearer s3cret"]),
        Some(&initialize()),
    )
    .await;
    assert_eq!(answer["status"], 200, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_is_refused() {
    let output = within(
        "elicit serve to refuse",
        Command::new(binary("elicit"))
            .args(["serve", "--listen", "0.0.0.0:0", "--", "true"])
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("run elicit serve");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("0.0.0.0:0") && stderr.contains("loopback"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_session_and_its_server() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let serve = Serve::start(bus.address(), &[], &server, &[]).await;
    assert!(children_of(serve.pid()).is_empty(), "no server before a session");

    let answer = probe("POST", &serve.url, &post_headers(&[]), Some(&initialize())).await;
    assert_eq!(answer["status"], 200, "{answer}");
    let session = answer["headers"]["mcp-session-id"]
        .as_str()
        .expect("a session id")
        .to_owned();
    let servers = children_of(serve.pid());
    assert_eq!(
        servers.len(),
        1,
        "one server process for the session: {servers:?}"
    );

    // A request without the session, or with an unknown one.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let answer = probe("POST", &serve.url, &post_headers(&[]), Some(&list)).await;
    assert_eq!(answer["status"], 400, "{answer}");
    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&["Mcp-Session-Id: nope"]),
        Some(&list),
    )
    .await;
    assert_eq!(answer["status"], 404, "{answer}");

    let answer = probe(
        "DELETE",
        &serve.url,
        &[format!("Mcp-Session-Id: {session}")],
        None,
    )
    .await;
    assert_eq!(answer["status"], 200, "{answer}");
    let pid = serve.pid();
    eventually("the session's server to end", || async move {
        children_of(pid).is_empty()
    })
    .await;
    let answer = probe(
        "POST",
        &serve.url,
        &post_headers(&[&format!("Mcp-Session-Id: {session}")]),
        Some(&list),
    )
    .await;
    assert_eq!(answer["status"], 404, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_serves_each_server_under_its_name() {
    let Some(server) = python("elicit_server.py") else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("serve.toml");
    let command = serde_json::to_string(&server).expect("a TOML array is a JSON array of strings");
    std::fs::write(
        &config,
        format!("listen = \"127.0.0.1:0\"\n[[server]]\nname = \"one\"\ncommand = {command}\n[[server]]\nname = \"two\"\ncommand = {command}\n"),
    )
    .expect("write the config");
    let mut child = Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "serve", "--config"])
        .arg(&config)
        .env("PYTHONPATH", peers().join("python/site"))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start elicit serve");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut urls = Vec::new();
    for _ in 0..2 {
        let url = within("a URL", stdout.next_line())
            .await
            .expect("read")
            .expect("a URL line");
        urls.push(url);
    }
    assert!(
        urls[0].ends_with("/one/mcp") && urls[1].ends_with("/two/mcp"),
        "{urls:?}"
    );
    let answer = probe("POST", &urls[1], &post_headers(&[]), Some(&initialize())).await;
    assert_eq!(answer["status"], 200, "{answer}");
    let elsewhere = urls[1].replace("/two/mcp", "/three/mcp");
    let answer = probe("POST", &elsewhere, &post_headers(&[]), Some(&initialize())).await;
    assert_eq!(answer["status"], 404, "{answer}");
}

/// A 2025-era host gone while its form waits, its call already answered
/// (the server asks on its own, as a task or a background job does):
/// nothing waits in the session's streams, yet the form's answer leads to
/// what only the host could take, so the session ends after
/// `--session-idle-pending` (issue 39: it waited out the 5-minute idle
/// period) and the form goes as `client-gone`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_waiting_for_a_host_that_left_ends_its_session_soon() {
    const PENDING: Duration = Duration::from_secs(2);
    let (bus, _daemon, mut frontend) = system().await;
    let pending = PENDING.as_secs().to_string();
    let flags = ["--session-idle", "300", "--session-idle-pending", &pending];
    let serve = Serve::start(bus.address(), &flags, &fake(&["--initialize"]), &[]).await;
    let answer = probe("POST", &serve.url, &post_headers(&[]), Some(&initialize())).await;
    let session = answer["headers"]["mcp-session-id"]
        .as_str()
        .unwrap_or_else(|| panic!("a session id: {answer}"))
        .to_owned();
    let in_session = format!("Mcp-Session-Id: {session}");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}});
    let answer = probe("POST", &serve.url, &post_headers(&[&in_session]), Some(&call)).await;
    assert_eq!(answer["status"], 200, "{answer}");
    // The call's answer came and its connection closed: the host is gone.
    let left = Instant::now();
    let shown = frontend.next_show().await;
    let (form, reason) = frontend.next_withdraw().await;
    let took = left.elapsed();
    eprintln!(
        "the session ended {} ms after its host left mid-form",
        took.as_millis()
    );
    assert_eq!((form, reason.as_str()), (shown.form, "client-gone"));
    assert!(took >= PENDING, "ended before its period: {took:?}");
    assert!(took < PENDING + Duration::from_secs(3), "{took:?}");
    let pid = serve.pid();
    eventually("the session's server to end", || async move {
        children_of(pid).is_empty()
    })
    .await;
}
