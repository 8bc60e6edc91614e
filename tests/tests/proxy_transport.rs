//! `elicit proxy` reached in other ways: from another machine through ssh
//! forwarding, and by hosts on a socket pair or on files.
//!
//! The host side is this test writing JSON-RPC lines: that keeps one
//! harness, lets every test see exactly the bytes a host would get, and
//! covers the 2026-07-28 era without depending on a host SDK's choices. A
//! test whose peer is missing says so loudly and returns, or fails when
//! `CI` is set.

use std::process::Stdio;

use elicit_tests::mcp::{Host, fake, system};
use elicit_tests::{Daemon, PrivateBus, binary, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// The fallback of REMOTE.md against a real OpenSSH server on 127.0.0.1:
/// the "remote" proxy reaches the daemon through `ssh -R` to the whole bus
/// socket (tests/tests/asker_socket.rs has the recommended asker socket).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_agent_reaches_the_daemon_through_ssh_forwarding() {
    let Some(sshd) = elicit_tests::ssh::Sshd::start() else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let remote_socket = dir.path().join("remote-bus.sock");
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let client = sshd.forward(&user, &remote_socket, &bus.dir().join("bus")).await;

    let address = format!("unix:path={}", remote_socket.display());
    let mut host = Host::proxy(&address, &[], &fake(&[]));
    host.call(1, "tools/call", json!({"name": "ask"})).await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Your name?");
    frontend
        .answer(&shown, "accept", json!({"name": "far away"}))
        .await
        .expect("accept");
    let got = loop {
        let m = host.recv().await;
        if m["method"] == "test/got" {
            break m;
        }
    };
    assert_eq!(got["params"]["line"]["result"]["content"]["name"], "far away");
    drop(host);
    drop(client);
}

/// Node hosts connect a server's stdio through socket pairs, shells and
/// scripts through files: the proxy polls a socket (as it does a pipe) and
/// falls back to blocking reads and writes for a file; both relay alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_on_a_socket_pair_or_on_files_are_relayed() {
    use std::os::fd::OwnedFd;
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let proxy = || {
        let mut cmd = Command::new(binary("elicit"));
        cmd.arg("--bus")
            .arg(bus.address())
            .arg("proxy")
            .arg("--")
            .args(fake(&[]))
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        cmd
    };
    let answered = |line: &str| {
        let reply: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(reply["id"], json!(1), "{line}");
        assert!(reply.get("result").is_some(), "{line}");
    };

    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
    let theirs_out = theirs.try_clone().expect("dup");
    let mut child = proxy()
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .spawn()
        .expect("start the proxy");
    ours.set_nonblocking(true).expect("non-blocking");
    let (read, mut write) = tokio::net::UnixStream::from_std(ours)
        .expect("tokio socket")
        .into_split();
    write
        .write_all(format!("{ping}\n").as_bytes())
        .await
        .expect("write");
    let mut lines = BufReader::new(read).lines();
    let line = within("the reply over the socket", lines.next_line())
        .await
        .expect("read")
        .expect("a line");
    answered(&line);
    drop(write);
    let status = within("the proxy to exit on EOF", child.wait())
        .await
        .expect("wait");
    assert!(status.success(), "{status}");

    let input = bus.dir().join("host-input.jsonl");
    let output = bus.dir().join("host-output.jsonl");
    std::fs::write(&input, format!("{ping}\n")).expect("input file");
    let status = within(
        "the proxy to relay a file and exit",
        proxy()
            .stdin(std::fs::File::open(&input).expect("open input"))
            .stdout(std::fs::File::create(&output).expect("create output"))
            .status(),
    )
    .await
    .expect("run");
    assert!(status.success(), "{status}");
    let written = std::fs::read_to_string(&output).expect("output file");
    answered(written.lines().next().expect("one reply line"));
}
