//! `elicit proxy --url http://localhost:PORT/mcp` where nothing resolves
//! `localhost`: a bare container or debootstrap root has no `/etc/hosts`,
//! and DNS does not know the name. The proxy takes `localhost` as loopback
//! itself (RFC 6761), as curl and browsers do.
//!
//! The world is built for the proxy alone: a mount namespace where
//! `/etc/hosts` and `/etc/resolv.conf` are empty files (`unshare --mount`,
//! which needs root). The Python server and the test's bus stay outside it.

use std::path::Path;

use elicit_tests::binary;
use elicit_tests::http::python_http_server;
use elicit_tests::mcp::{Host, book_through, system};
use serde_json::json;
use tokio::process::Command;

/// `program ARGS…` in a mount namespace of its own where `/etc/hosts` and
/// `/etc/resolv.conf` are `empty`.
fn without_hosts(empty: &Path, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--", "sh", "-c"])
        .arg(r#"empty=$1; shift; mount --bind "$empty" /etc/hosts && mount --bind "$empty" /etc/resolv.conf && exec "$@""#)
        .arg("sh")
        .arg(empty)
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
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "").expect("an empty file");

    // The world is what it claims to be: nothing there knows `localhost`.
    let lookup = without_hosts(&empty, Path::new("getent"), &["ahosts", "localhost"])
        .output()
        .await
        .expect("unshare runs");
    assert!(
        !lookup.status.success(),
        "localhost still resolves in the namespace, so this test would prove nothing: {}",
        String::from_utf8_lossy(&lookup.stdout)
    );

    let (bus, _daemon, mut frontend) = system().await;
    let url = format!("http://localhost:{}/mcp", server.port);
    let mut host = Host::spawn(without_hosts(
        &empty,
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
