//! No server outlives its host: whatever happens to `elicit proxy` (INT,
//! TERM or KILL, in the order and at the intervals real hosts use, its
//! input closed, its output or standard error a broken pipe), the server's
//! whole process tree is gone within a second of the proxy's end.
//!
//! The server is `sh -c 'python3 tree_server.py; :'`, which stands for
//! `sh -c` → `npm exec` → `node`: a shell, a server that keeps running
//! after its input closes, and a helper the server forked (with
//! `--escape`, one that left the group with `setsid`, as a daemon does).
//! Every process of the tree carries a marker in its environment, so the
//! test finds them wherever they moved. Each case prints how long the
//! tree took to go after the proxy ended.

use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use elicit_tests::mcp::peers;
use elicit_tests::procs::{self, TREE_MARKER};
use elicit_tests::{binary, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// Within this long of the proxy's end, nothing of the tree may be left.
const LIMIT: Duration = Duration::from_secs(1);

/// A proxy in front of a server tree, its three standard streams piped,
/// as Claude Code starts a stdio server.
struct Proxied {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<Lines<BufReader<ChildStdout>>>,
    stderr: Option<ChildStderr>,
    marker: String,
}

impl Proxied {
    /// Starts the proxy and waits until the whole tree runs: the shell,
    /// the server and its helper, under whatever the proxy adds.
    async fn start(flags: &[&str], escape: bool) -> Proxied {
        Proxied::start_with(flags, if escape { "--escape" } else { "" }).await
    }

    /// [`Proxied::start`] with `tree_server.py`'s flags.
    async fn start_with(flags: &[&str], server_flags: &str) -> Proxied {
        let marker = format!("{}-{}", std::process::id(), rand_suffix());
        let script = peers().join("python/tree_server.py");
        let server = format!("python3 {} {server_flags}; :", script.display());
        let mut child = Command::new(binary("elicit"))
            .env(TREE_MARKER, &marker)
            // No form is asked: the broker is never reached.
            .args(["--bus", "unix:path=/nonexistent", "proxy"])
            .args(flags)
            .args(["--", "sh", "-c", &server])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the proxy starts");
        let mut proxied = Proxied {
            stdin: child.stdin.take(),
            stdout: child.stdout.take().map(|out| BufReader::new(out).lines()),
            stderr: child.stderr.take(),
            child,
            marker,
        };
        proxied.ping(1).await;
        // The proxy, the shell, the server and its helper at least.
        within("the server's whole tree to run", async {
            while procs::marked(&proxied.marker).len() < 4 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        proxied
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("the proxy runs")
    }

    async fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
        stdin.flush().await.expect("flush");
    }

    async fn ping(&mut self, id: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let lines = self.stdout.as_mut().expect("stdout open");
        let line = within("the ping's answer", lines.next_line())
            .await
            .expect("read")
            .expect("the proxy answers");
        let reply: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(reply["id"], json!(id), "{line}");
    }

    /// Waits for the proxy to end; then for its tree, at most [`LIMIT`].
    /// Returns the proxy's status and how long the tree took.
    async fn end(mut self, case: &str) -> (ExitStatus, Duration) {
        let status = within("the proxy to end", self.child.wait()).await.expect("wait");
        let gone = procs::all_gone(&self.marker, LIMIT).await;
        let took = gone.unwrap_or_else(|left| {
            panic!(
                "{case}: processes of the server's tree still run {LIMIT:?} after the proxy ended ({status:?}): {left:?}"
            )
        });
        eprintln!("measured: {case}: the server's tree was gone {took:?} after the proxy ended ({status:?})");
        (status, took)
    }
}

impl Drop for Proxied {
    /// A failed case leaves nothing behind for the next: whatever of the
    /// tree still runs is killed.
    fn drop(&mut self) {
        for pid in procs::marked(&self.marker) {
            procs::signal("-KILL", pid);
        }
    }
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
}

impl Proxied {
    /// Claude Code's shutdown: INT, TERM 0.1 s later, KILL 0.4 s after
    /// that, the proxy's standard error on a pipe that goes with the host.
    /// The sleeps are the host's timing, which is the case under test.
    async fn shut_down_as_claude_code(&mut self) {
        let pid = self.pid();
        procs::signal("-INT", pid);
        self.stderr = None;
        tokio::time::sleep(Duration::from_millis(100)).await;
        procs::signal("-TERM", pid);
        tokio::time::sleep(Duration::from_millis(400)).await;
        procs::signal("-KILL", pid);
    }
}

fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// Claude Code's shutdown ([`Proxied::shut_down_as_claude_code`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claude_code_shutdown_leaves_no_process() {
    let mut proxied = Proxied::start(&[], false).await;
    proxied.shut_down_as_claude_code().await;
    let (status, _) = proxied.end("INT, TERM at 0.1 s, KILL at 0.5 s").await;
    assert!(
        status.code() == Some(128 + 15) || signal_of(status) == Some(9),
        "the proxy ended with the server's TERM, or by the host's KILL: {status:?}"
    );
}

/// The same shutdown with a server that ignores TERM: the proxy is
/// KILLed before its grace ends, and its warden KILLs the tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claude_code_shutdown_ends_a_server_that_ignores_term() {
    let mut proxied = Proxied::start_with(&[], "--ignore-term").await;
    proxied.shut_down_as_claude_code().await;
    let (status, _) = proxied
        .end("INT, TERM at 0.1 s, KILL at 0.5 s; the server ignores TERM")
        .await;
    assert_eq!(signal_of(status), Some(9), "the host's KILL: {status:?}");
}

/// KILL alone: the proxy cannot clean up, and its tree still goes, the
/// helper that left the group with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_proxy_leaves_no_process() {
    let proxied = Proxied::start(&[], true).await;
    procs::signal("-KILL", proxied.pid());
    let (status, _) = proxied.end("KILL").await;
    assert_eq!(signal_of(status), Some(9), "{status:?}");
}

/// TERM ends the tree at once, not after the grace a host that only
/// closes its input gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_ends_the_tree_at_once() {
    let proxied = Proxied::start(&[], false).await;
    let signalled = Instant::now();
    procs::signal("-TERM", proxied.pid());
    let (status, took) = proxied.end("TERM").await;
    let total = signalled.elapsed();
    assert!(
        total < LIMIT,
        "the tree took {total:?} to go after TERM (the proxy's end: {:?})",
        total - took
    );
    assert_eq!(status.code(), Some(128 + 15), "the server's TERM: {status:?}");
}

/// A host that closes the proxy's input gives the server its grace period;
/// then the whole tree goes, the helper that left the group too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_input_ends_the_tree_after_the_grace() {
    let mut proxied = Proxied::start(&["--exit-grace-ms", "200"], true).await;
    proxied.stdin = None;
    let (status, _) = proxied.end("stdin closed, grace 200 ms").await;
    assert_eq!(status.code(), Some(128 + 15), "the server's TERM: {status:?}");
}

/// The proxy's warning after the grace meets a standard error nobody
/// reads any more: no panic, and the tree goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_standard_error_is_no_panic() {
    let mut proxied = Proxied::start(&["--exit-grace-ms", "200"], false).await;
    proxied.stderr = None;
    proxied.stdin = None;
    let (status, _) = proxied.end("stderr broken, stdin closed").await;
    assert_eq!(
        status.code(),
        Some(128 + 15),
        "the server's TERM, not a panic (101): {status:?}"
    );
}

/// A host that stops reading the proxy's output has left, though its end
/// of the input stays open: the proxy's next line fails, and the proxy
/// ends as after EOF.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_output_counts_as_the_host_gone() {
    let mut proxied = Proxied::start(&["--exit-grace-ms", "200"], false).await;
    proxied.stdout = None;
    proxied
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let (status, _) = proxied.end("stdout broken").await;
    assert_eq!(status.code(), Some(128 + 15), "the server's TERM: {status:?}");
}
