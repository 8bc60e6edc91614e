//! Who can reach `elicit serve` (issue 28): the user it runs as, and no
//! one else. Over loopback TCP the kernel says which uid owns a client's
//! socket (NETLINK_SOCK_DIAG); over `--listen unix:PATH` the socket is
//! 0600 and the peer's credentials are checked too.
//!
//! The other user is `nobody` (uid 65534), reached with `setpriv` (the
//! tests run as root); its client is `curl`. The upstream is the Python
//! server behind a `sh` that writes a line to a file when it starts: a
//! refused client must not start it.
//!
//! A test whose tools are missing says so loudly and returns, or fails
//! when `CI` is set.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use elicit_tests::http::{free_port, wait_for_port};
use elicit_tests::mcp::{missing, peers, python, system};
use elicit_tests::procs::kill;
use elicit_tests::{binary, eventually, is_root, which, within};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// `nobody`.
const OTHER_UID: &str = "65534";

/// Root, setpriv and curl, or a loud skip (a failure under `CI`).
fn tools() -> Option<()> {
    if !is_root() || which("setpriv").is_none() || which("curl").is_none() {
        return missing("root with setpriv and curl (a client of another uid)");
    }
    Some(())
}

/// The upstream: `sh` notes its start in `marker`, then runs the Python
/// server.
fn marked_upstream(marker: &Path) -> Option<Vec<String>> {
    let server = python("elicit_server.py")?;
    let mut upstream = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        "echo started >> \"$0\"; exec \"$@\"".to_owned(),
        marker.display().to_string(),
    ];
    upstream.extend(server);
    Some(upstream)
}

/// `elicit serve --listen LISTEN -- UPSTREAM`, its standard error in
/// `stderr`; killed on drop.
fn start_serve(bus: &str, listen: &str, upstream: &[String], stderr: &Path) -> Child {
    let log = std::fs::File::create(stderr).expect("a file for serve's stderr");
    Command::new(binary("elicit"))
        .args(["--bus", bus, "serve", "--listen", listen, "--"])
        .args(upstream)
        .env("PYTHONPATH", peers().join("python/site"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("start elicit serve")
}

/// An `initialize` request's body.
fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"}}})
}

/// A 2026-07-28 `tools/call`, which needs no session, and its headers.
fn stateless_call() -> (Value, Vec<&'static str>) {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "book", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    (
        body,
        vec![
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: book",
        ],
    )
}

/// What curl got: the status (0 when it could not connect) and the body.
#[derive(Debug)]
struct Answer {
    status: u16,
    body: String,
    exit: Option<i32>,
}

/// POSTs `body` to `url` with curl, as `uid` when given, over the Unix
/// socket `unix` when given.
async fn post(uid: Option<&str>, unix: Option<&Path>, url: &str, body: &Value, headers: &[&str]) -> Answer {
    let mut argv: Vec<String> = Vec::new();
    if let Some(uid) = uid {
        argv.extend(
            ["setpriv", "--reuid", uid, "--regid", uid, "--clear-groups"]
                .iter()
                .map(|s| s.to_string()),
        );
    }
    argv.extend(["curl", "-sS", "--max-time", "20", "-w", "\n%{http_code}"].map(String::from));
    if let Some(path) = unix {
        argv.extend(["--unix-socket".to_owned(), path.display().to_string()]);
    }
    for header in [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ]
    .iter()
    .chain(headers)
    {
        argv.extend(["-H".to_owned(), header.to_string()]);
    }
    argv.extend(["--data-binary".to_owned(), body.to_string(), url.to_owned()]);
    let output = within(
        "curl",
        Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir("/")
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("run curl");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
    Answer {
        status: status.trim().parse().unwrap_or(0),
        body: body.to_owned(),
        exit: output.status.code(),
    }
}

fn started(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn refusals(stderr: &Path) -> usize {
    std::fs::read_to_string(stderr)
        .unwrap_or_default()
        .matches(&format!("refusing connections from uid {OTHER_UID}"))
        .count()
}

/// Over loopback TCP, without a token: nobody's `initialize` and
/// stateless `tools/call` get 403 and start no server, the refusal is
/// logged once; the user's own `initialize` is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tcp_only_the_own_user_is_served() {
    let Some(()) = tools() else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let marker = dir.path().join("started");
    let Some(upstream) = marked_upstream(&marker) else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let port = free_port();
    let stderr = dir.path().join("serve.stderr");
    let mut served = start_serve(bus.address(), &format!("127.0.0.1:{port}"), &upstream, &stderr);
    wait_for_port(&mut served, port, "elicit serve").await;
    let url = format!("http://127.0.0.1:{port}/mcp");

    let refused = post(Some(OTHER_UID), None, &url, &initialize(), &[]).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(
        refused.body.contains("uid 65534") && refused.body.contains("admits only the user it runs as"),
        "{refused:?}"
    );
    let (call, headers) = stateless_call();
    let refused = post(Some(OTHER_UID), None, &url, &call, &headers).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(started(&marker), 0, "a refused client started no server");
    assert_eq!(refusals(&stderr), 1, "logged once per uid");

    let served_answer = post(None, None, &url, &initialize(), &[]).await;
    assert_eq!(served_answer.status, 200, "{served_answer:?}");
    assert!(served_answer.body.contains("serverInfo"), "{served_answer:?}");
    assert_eq!(started(&marker), 1, "the own user's session started its server");
}

/// `--listen unix:PATH`: the socket is 0600 and the user's curl is
/// served over it; nobody cannot connect, and when the mode is opened
/// (root can), the peer-credential check still refuses nobody with 403.
/// The socket goes when serve ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_a_unix_socket_only_the_own_user_is_served() {
    use std::os::unix::fs::PermissionsExt;
    let Some(()) = tools() else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    // nobody must be able to reach the socket's directory for the
    // second layer to be what refuses it.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let marker = dir.path().join("started");
    let Some(upstream) = marked_upstream(&marker) else {
        return;
    };
    let (bus, _daemon, _frontend) = system().await;
    let socket: PathBuf = dir.path().join("serve.sock");
    let stderr = dir.path().join("serve.stderr");
    let mut served = start_serve(
        bus.address(),
        &format!("unix:{}", socket.display()),
        &upstream,
        &stderr,
    );
    eventually("elicit serve to accept on its Unix socket", || {
        let socket = socket.clone();
        async move { tokio::net::UnixStream::connect(&socket).await.is_ok() }
    })
    .await;
    let mode = std::fs::metadata(&socket)
        .expect("the socket")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);

    let url = "http://localhost/mcp";
    let answer = post(None, Some(&socket), url, &initialize(), &[]).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains("serverInfo"), "{answer:?}");

    let blocked = post(Some(OTHER_UID), Some(&socket), url, &initialize(), &[]).await;
    assert_eq!(
        blocked.status, 0,
        "nobody cannot connect to a 0600 socket: {blocked:?}"
    );
    assert_ne!(blocked.exit, Some(0), "{blocked:?}");

    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let refused = post(Some(OTHER_UID), Some(&socket), url, &initialize(), &[]).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(refused.body.contains("uid 65534"), "{refused:?}");
    assert_eq!(
        started(&marker),
        1,
        "only the own user's session started a server"
    );

    kill("-TERM", served.id().expect("serve runs"));
    tokio::time::timeout(Duration::from_secs(30), served.wait())
        .await
        .expect("serve ends on SIGTERM")
        .expect("wait");
    assert!(!socket.exists(), "the socket goes with serve");
}
