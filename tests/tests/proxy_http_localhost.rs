//! `elicit proxy --url http://localhost:PORT/mcp` where nothing resolves
//! `localhost`: a bare container or debootstrap root has no `/etc/hosts`,
//! and DNS does not know the name. The proxy takes `localhost` as loopback
//! itself (RFC 6761), as curl and browsers do.
//!
//! The world is built for the proxy alone: a mount namespace where
//! `/etc/hosts` and `/etc/resolv.conf` are empty files and
//! `/etc/nsswitch.conf` asks only those two (no `myhostname` or
//! `resolve` module that knows `localhost` by itself), made with
//! `unshare --mount`, which needs root. The Python server and the test's
//! bus stay outside it.

use std::path::Path;

use elicit_tests::binary;
use elicit_tests::http::python_http_server;
use elicit_tests::mcp::{Host, book_through, system};
use serde_json::json;
use tokio::process::Command;

/// `program ARGS…` in a mount namespace of its own where nothing
/// resolves a name: the files of `etc` stand over `/etc/hosts`,
/// `/etc/resolv.conf` and `/etc/nsswitch.conf` (where one is missing,
/// glibc's default asks nothing that knows `localhost` either).
fn without_hosts(etc: &Path, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--", "sh", "-c"])
        .arg(concat!(
            r#"etc=$1; shift; for f in hosts resolv.conf nsswitch.conf; do "#,
            r#"[ -e "/etc/$f" ] || continue; mount --bind "$etc/$f" "/etc/$f" || exit 1; done; exec "$@""#
        ))
        .arg("sh")
        .arg(etc)
        .arg(program)
        .args(args);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_localhost_url_works_with_no_hosts_file_and_no_dns() {
    let root = elicit_tests::is_root() && elicit_tests::which("unshare").is_some();
    if !elicit_tests::ssh::required("root and unshare (to take /etc/hosts away)", root) {
        return;
    }
    let Some(server) = python_http_server().await else {
        return;
    };
    let etc = tempfile::tempdir().expect("temp dir");
    for (file, text) in [
        ("hosts", ""),
        ("resolv.conf", ""),
        ("nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n"),
    ] {
        std::fs::write(etc.path().join(file), text).expect("a file of the namespace's /etc");
    }

    // The world is what it claims to be: nothing there knows `localhost`
    // (getent's 2 is "not found"; the namespace failing to form is not).
    let lookup = without_hosts(etc.path(), Path::new("getent"), &["ahosts", "localhost"])
        .output()
        .await
        .expect("unshare runs");
    assert_eq!(
        lookup.status.code(),
        Some(2),
        "localhost must be unknown in the namespace, or this test proves nothing: {}{}",
        String::from_utf8_lossy(&lookup.stdout),
        String::from_utf8_lossy(&lookup.stderr)
    );

    let (bus, _daemon, mut frontend) = system().await;
    let url = format!("http://localhost:{}/mcp", server.port);
    let mut host = Host::spawn(without_hosts(
        etc.path(),
        &binary("elicit"),
        &["--bus", bus.address(), "proxy", "--url", &url],
    ));
    let init = host.initialize(json!({})).await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "elicit-test-server",
        "the server at localhost answers the handshake: {init}"
    );
    book_through(&mut host, &mut frontend, 1, "3C", 1).await;
}
