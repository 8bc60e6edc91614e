//! OAuth mix-up defences of `elicit proxy --url` (issue 28), whole-system:
//! tests/peers/python/oauth_server.py is an MCP server with an
//! authorization server of its own that lies about its issuer (RFC 8414
//! §3.3) or sends a wrong or no `iss` on the redirect (RFC 9207), and
//! tests/peers/python/conformance_host.py is the host that runs the proxy,
//! accepts the sign-in form and "opens" its URL as a browser would.
//!
//! The refusal reaches the host as its request's error, which names why.
//! What the peer printed tells how far the client went: a refused issuer
//! never reaches `/as/register` or `/as/authorize`; a refused `iss` never
//! reaches `/as/token` (the code is traded nowhere).

use std::process::Stdio;
use std::time::Duration;

use elicit_tests::mcp::{peers, python};
use elicit_tests::{Daemon, PrivateBus, binary};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// How long one sign-in may take, host and all.
const RUN_DEADLINE: Duration = Duration::from_secs(60);

/// What one run showed: the requests the peer saw, the proxy's standard
/// error, and the host's.
struct Run {
    /// The issuer the resource names, `http://127.0.0.1:PORT/as`.
    issuer: String,
    requests: Vec<String>,
    proxy: String,
    host: String,
}

/// Runs the host (and so the proxy) against oauth_server.py with `flags`.
async fn sign_in(flags: &[&str]) -> Option<Run> {
    let mut server = python("oauth_server.py")?;
    server.extend(flags.iter().map(|f| f.to_string()));
    let mut peer = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 starts");
    let mut lines = BufReader::new(peer.stdout.take().expect("stdout")).lines();
    let first = tokio::time::timeout(RUN_DEADLINE, lines.next_line())
        .await
        .expect("oauth_server.py says where it listens")
        .expect("read")
        .expect("a line");
    let url = first
        .strip_prefix("listening on ")
        .expect("the listening line")
        .to_owned();
    let requests = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            seen.push(line);
        }
        seen
    });

    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let state = tempfile::tempdir().expect("a temporary directory");
    let proxy_log = state.path().join("proxy.stderr");
    let host = Command::new("python3")
        .arg(peers().join("python/conformance_host.py"))
        .arg(&url)
        .env("PYTHONPATH", peers().join("python/site"))
        .env("ELICIT", binary("elicit"))
        .env("BUS", bus.address())
        .env("PROXY_STDERR", &proxy_log)
        .env_remove("MCP_CONFORMANCE_SCENARIO")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let host = tokio::time::timeout(RUN_DEADLINE, host)
        .await
        .expect("the host to finish its sign-in within the deadline")
        .expect("the host runs");
    let _ = peer.kill().await;
    let requests = requests.await.expect("the peer's lines");
    Some(Run {
        issuer: format!("{}/as", url.trim_end_matches("/mcp")),
        requests,
        proxy: std::fs::read_to_string(&proxy_log).unwrap_or_default(),
        host: String::from_utf8_lossy(&host.stderr).into_owned(),
    })
}

impl Run {
    /// What the host and the proxy said: the refusal reaches the host as
    /// the error of its request.
    fn said(&self) -> String {
        format!("{}\n{}", self.proxy, self.host)
    }

    fn reached(&self, request: &str) -> bool {
        self.requests.iter().any(|line| line == request)
    }

    fn all(&self) -> String {
        format!(
            "requests: {:?}\n--- proxy:\n{}\n--- host:\n{}",
            self.requests, self.proxy, self.host
        )
    }
}

/// The control: an honest server that sends the right `iss`, advertised.
/// The code is traded and the tool answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_issuer_signs_in() {
    let Some(run) = sign_in(&["--advertise-iss", "--iss", "right"]).await else {
        return;
    };
    assert!(run.reached("POST /as/token"), "{}", run.all());
    assert!(run.host.contains("signed in"), "{}", run.all());
}

/// Metadata that names another issuer than the one it was fetched for is
/// refused, naming both; its endpoints are never used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_of_another_issuer_is_refused() {
    let Some(run) = sign_in(&["--claim-issuer", "https://attacker.example/as"]).await else {
        return;
    };
    assert!(
        run.reached("GET /.well-known/oauth-authorization-server/as"),
        "{}",
        run.all()
    );
    assert!(!run.reached("POST /as/register"), "{}", run.all());
    assert!(!run.reached("GET /as/authorize"), "{}", run.all());
    assert!(
        run.said().contains("https://attacker.example/as") && run.said().contains(&run.issuer),
        "the refusal names both issuers:\n{}",
        run.all()
    );
    assert!(run.said().contains("RFC 8414"), "{}", run.all());
}

/// `iss` advertised but missing on the redirect: the code is not traded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_advertised_iss_is_refused() {
    let Some(run) = sign_in(&["--advertise-iss", "--iss", "none"]).await else {
        return;
    };
    assert!(run.reached("GET /as/authorize"), "{}", run.all());
    assert!(!run.reached("POST /as/token"), "{}", run.all());
    assert!(run.said().contains("carries no iss"), "{}", run.all());
}

/// A wrong `iss` is refused even where the server does not advertise it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_iss_is_refused() {
    let Some(run) = sign_in(&["--iss", "wrong"]).await else {
        return;
    };
    assert!(run.reached("GET /as/authorize"), "{}", run.all());
    assert!(!run.reached("POST /as/token"), "{}", run.all());
    assert!(
        run.said().contains("https://attacker.example/as") && run.said().contains(&run.issuer),
        "the refusal names the issuer that answered and the one asked:\n{}",
        run.all()
    );
}
