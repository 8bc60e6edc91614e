//! MCP over Streamable HTTP: servers on a loopback port (the Python
//! `http_server.py` and `conformance_server.py`, server-everything), `elicit proxy --url`, `elicit
//! serve`, and the conformance suite's runs with their summaries.
//!
//! Every wait is for a condition with a deadline: a port that accepts, a
//! line a server prints, a process that ends.

use std::net::TcpListener;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

use serde_json::Value;

use crate::mcp::{Host, conformance, everything_http, peers, python};
use crate::{PrivateBus, binary, eventually, within};

/// How long one run of the conformance suite may take before it counts as
/// hung: its own client timeout is 30 s, but in a fresh Debian 12 root on
/// a loaded 2-core machine the `dns-rebinding-protection` server scenario
/// through `elicit serve` ran past 90 s (its test binary took 684 s against
/// about 207 s unloaded) and failed only for that. The wait ends as soon
/// as the suite does.
pub const SUITE_DEADLINE: Duration = Duration::from_secs(240);

/// A loopback port nobody listens on now (bound to 0 and released: another
/// process may take it before the test does, which is rare enough).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// A server process that accepts connections at `url`; killed on drop.
pub struct Listening {
    /// The process.
    pub child: Child,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Its port.
    pub port: u16,
    /// Its output, kept open so that it never writes into a closed pipe.
    _stdout: Option<Lines<BufReader<ChildStdout>>>,
}

/// A command with the Python peers on its path, killed on drop.
fn command(program: &[String]) -> Command {
    let mut cmd = Command::new(&program[0]);
    cmd.args(&program[1..])
        .env("PYTHONPATH", peers().join("python/site"))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    cmd
}

/// Waits until 127.0.0.1:`port` accepts a connection, failing the test
/// if `child` exits first or the deadline passes.
pub async fn wait_for_port(child: &mut Child, port: u16, what: &str) {
    let mut exited = None;
    eventually(&format!("{what} to accept connections on port {port}"), || {
        if let Ok(Some(status)) = child.try_wait() {
            exited = Some(status);
        }
        async move { exited.is_some() || tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() }
    })
    .await;
    if let Some(status) = exited {
        panic!("{what} exited before it listened on port {port}: {status}");
    }
}

/// Starts `program` (which listens on `port`) and waits until the port
/// accepts connections.
pub async fn start_on_port(program: &[String], port: u16) -> Listening {
    let mut child = command(program)
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {program:?}: {e}"));
    wait_for_port(&mut child, port, &program.join(" ")).await;
    Listening {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        port,
        _stdout: None,
    }
}

/// tests/peers/python/http_server.py on a port of its choosing: the tools of
/// elicit_server.py (book, two_step, legacy_ask) and `sign_in`, in both eras.
pub async fn python_http_server() -> Option<Listening> {
    python_http_server_on(0, &[]).await
}

/// tests/peers/python/http_server.py on `port` (0: any), with `flags`
/// (`--resumable`).
pub async fn python_http_server_on(port: u16, flags: &[&str]) -> Option<Listening> {
    let mut args = vec![port.to_string()];
    args.extend(flags.iter().map(|f| f.to_string()));
    python_listening("http_server.py", &args).await
}

/// tests/peers/python/conformance_server.py over Streamable HTTP on a port
/// of its choosing: what the suite's server scenarios expect, all of them.
pub async fn conformance_server_over_http() -> Option<Listening> {
    python_listening("conformance_server.py", &[]).await
}

/// tests/peers/python/conformance_server.py as a stdio server's command.
pub fn conformance_server_over_stdio() -> Option<Vec<String>> {
    let mut program = python("conformance_server.py")?;
    program.push("--stdio".into());
    Some(program)
}

/// A Python peer of tests/peers/python that prints `listening on URL`
/// once it accepts connections, started with `args`.
async fn python_listening(script: &str, args: &[String]) -> Option<Listening> {
    let mut program = python(script)?;
    program.extend(args.iter().cloned());
    let mut child = command(&program)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = within(&format!("{script} to say where it listens"), lines.next_line())
        .await
        .expect("read")
        .unwrap_or_else(|| panic!("{script} ended before it listened"));
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("not the line expected: {line}"))
        .to_owned();
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|e| panic!("no port in {url}: {e}"));
    Some(Listening {
        child,
        url,
        port,
        _stdout: Some(lines),
    })
}

/// server-everything over Streamable HTTP on a free port.
pub async fn everything_over_http() -> Option<Listening> {
    let port = free_port();
    let program = everything_http(port)?;
    Some(start_on_port(&program, port).await)
}

/// `elicit --bus BUS proxy --url URL FLAGS…`, the host on its stdio.
pub fn proxy_url(bus: &str, url: &str, flags: &[&str]) -> Host {
    let mut cmd = Command::new(binary("elicit"));
    cmd.arg("--bus")
        .arg(bus)
        .arg("proxy")
        .arg("--url")
        .arg(url)
        .args(flags);
    Host::spawn(cmd)
}

/// `elicit --bus BUS serve --listen 127.0.0.1:PORT ARGS…` on a free port
/// (ARGS: `--upstream URL`, or `-- COMMAND…`, with any flags before), once
/// it accepts connections.
pub async fn serve(bus: &str, args: &[String]) -> Listening {
    let port = free_port();
    let mut program = vec![
        binary("elicit").display().to_string(),
        "--bus".into(),
        bus.to_owned(),
        "serve".into(),
        "--listen".into(),
        format!("127.0.0.1:{port}"),
    ];
    program.extend(args.iter().cloned());
    start_on_port(&program, port).await
}

/// The summary line of one conformance run: `Passed: P/T, F failed, W
/// warnings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Checks passed.
    pub passed: u32,
    /// Checks in all.
    pub total: u32,
    /// Checks failed.
    pub failed: u32,
    /// Warnings.
    pub warnings: u32,
}

/// One run of the conformance suite: its counts and all it printed.
#[derive(Debug, Clone)]
pub struct Run {
    /// The summary, if it printed one.
    pub counts: Option<Counts>,
    /// stdout and stderr, without colours.
    pub text: String,
}

impl Run {
    /// True when the suite printed a summary with checks and no failure
    /// (a client that never connects gets `Passed: 0/0, 0 failed` from
    /// some scenarios, `initialize` among them).
    pub fn passed(&self) -> bool {
        self.counts
            .is_some_and(|c| c.total > 0 && c.failed == 0 && c.passed == c.total)
    }

    /// The lines that say what failed: failed and warning checks, their
    /// errors, the summary, and a client's exit or timeout.
    pub fn failures(&self) -> String {
        self.text
            .lines()
            .filter(|l| {
                [
                    "FAILURE",
                    "WARNING",
                    "Error",
                    "error",
                    "Passed:",
                    "exit",
                    "timed out",
                ]
                .iter()
                .any(|w| l.contains(w))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The counts of the suite's `Passed: P/T, F failed, W warnings` line.
pub fn counts(text: &str) -> Option<Counts> {
    let line = text.lines().find_map(|l| l.trim().strip_prefix("Passed: "))?;
    let number = |s: &str| s.trim().split(' ').next().and_then(|n| n.parse().ok());
    let mut parts = line.split(',');
    let (passed, total) = parts.next()?.split_once('/')?;
    Some(Counts {
        passed: number(passed)?,
        total: number(total)?,
        failed: number(parts.next()?)?,
        warnings: parts.next().and_then(number).unwrap_or(0),
    })
}

/// `text` without its ANSI colour sequences (`ESC [ … m`).
pub fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs the conformance suite with `args` (after the script), within
/// [`SUITE_DEADLINE`]; `None` when the suite is not installed.
pub async fn suite(args: &[&str], env: &[(&str, &str)]) -> Option<Run> {
    let mut program = conformance()?;
    program.extend(args.iter().map(|a| a.to_string()));
    let output = command(&program)
        .current_dir(peers().join("node"))
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    let what = format!("the conformance suite: {}", args.join(" "));
    let output = match tokio::time::timeout(SUITE_DEADLINE, output).await {
        Ok(output) => output.expect("the suite runs"),
        Err(_) => panic!("timed out after {SUITE_DEADLINE:?} waiting for {what}"),
    };
    // The suite prints its summary on either stream, depending on version.
    let text = without_colours(&format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ));
    Some(Run {
        counts: counts(&text),
        text,
    })
}

/// A client scenario with tests/peers/python/conformance_host.py as the
/// client (it runs `elicit proxy --url`, or with `("BRIDGE", "fastmcp")`
/// the stdio proxy behind fastmcp's bridge), answering every form.
///
/// Fails at once, saying so, where the name `localhost` does not resolve:
/// the suite gives its client `http://localhost:PORT/mcp`, and every client
/// would then fail to connect, which the suite reports only as checks that
/// failed (fastmcp's bridge logs it and lists no tools).
pub async fn client_scenario(bus: &PrivateBus, scenario: &str, env: &[(&str, &str)]) -> Option<Run> {
    if let Err(error) = tokio::net::lookup_host(("localhost", 80)).await {
        panic!(
            "the name localhost does not resolve ({error}), and the conformance suite serves at \
             http://localhost:PORT: /etc/hosts needs `127.0.0.1 localhost` (tests/setup installs \
             netbase, which writes one where there is none)"
        );
    }
    let host = format!("python3 {}", peers().join("python/conformance_host.py").display());
    assert!(
        !host.contains("  ") && host.split(' ').count() == 2,
        "the suite splits its --command on spaces: {host}"
    );
    let elicit = binary("elicit").display().to_string();
    let mut all = vec![("ELICIT", elicit.as_str()), ("BUS", bus.address())];
    all.extend_from_slice(env);
    suite(&["client", "--scenario", scenario, "--command", &host], &all).await
}

/// A server scenario against the server at `url`.
pub async fn server_scenario(url: &str, scenario: &str) -> Option<Run> {
    suite(&["server", "--url", url, "--scenario", scenario], &[]).await
}

/// tests/peers/python/cutter.py in front of `port`: a TCP relay whose open
/// connections [`Cutter::cut`] drops, as a failing network would.
pub struct Cutter {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    /// The relay's address, with `/mcp`.
    pub url: String,
}

impl Cutter {
    /// Starts the relay to `127.0.0.1:port`.
    pub async fn start(port: u16) -> Cutter {
        let mut child = Command::new("python3")
            .arg(peers().join("python/cutter.py"))
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("cutter.py starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let line = within("cutter.py to listen", lines.next_line())
            .await
            .expect("read")
            .expect("a line");
        let own = line.strip_prefix("listening on ").expect("its port").to_owned();
        Cutter {
            child,
            lines,
            url: format!("http://127.0.0.1:{own}/mcp"),
        }
    }

    /// Drops every connection open now; how many there were.
    pub async fn cut(&mut self) -> usize {
        use tokio::io::AsyncWriteExt;
        let stdin = self.child.stdin.as_mut().expect("stdin");
        stdin.write_all(b"cut\n").await.expect("write");
        stdin.flush().await.expect("flush");
        let line = within("cutter.py to cut", self.lines.next_line())
            .await
            .expect("read")
            .expect("a line");
        line.trim_start_matches("cut ").parse().expect("a count")
    }
}

/// Runs the Python SDK's host `http_host.py --mode MODE URL TOOL`; returns
/// its child and its event lines (one JSON object each).
pub fn python_http_host(url: &str, mode: &str, tool: &str) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new("python3")
        .arg(peers().join("python/http_host.py"))
        .args(["--mode", mode, url, tool])
        .env("PYTHONPATH", peers().join("python/site"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start http_host.py");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, lines)
}

/// The host's next event of `kind` (`ready`, `result`, `closed`, …),
/// within the usual deadline.
pub async fn host_event(lines: &mut Lines<BufReader<ChildStdout>>, kind: &str) -> Value {
    loop {
        let line = within(&format!("the host's {kind} event"), lines.next_line())
            .await
            .expect("read")
            .unwrap_or_else(|| panic!("the host ended before its {kind} event"));
        let event: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if event["event"] == kind {
            return event;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_is_read_with_or_without_warnings() {
        let text = "Checks:\n…\nTest Results:\nPassed: 1/2, 1 failed, 3 warnings\n";
        assert_eq!(
            counts(text),
            Some(Counts {
                passed: 1,
                total: 2,
                failed: 1,
                warnings: 3
            })
        );
        let old = counts("Passed: 5/5, 0 failed").expect("counts");
        assert_eq!((old.passed, old.failed, old.warnings), (5, 0, 0));
        assert_eq!(counts("no summary"), None);
        assert_eq!(without_colours("\u{1b}[31mFAILURE\u{1b}[0m"), "FAILURE");
    }
}
