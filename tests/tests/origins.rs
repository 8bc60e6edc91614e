//! What the proxy verified about the server it started reaches the rules
//! apart from what the server and client say about themselves.

use std::process::Stdio;

use elicit_tests::{Daemon, PrivateBus, binary, eventually};
use tokio::io::AsyncWriteExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_see_the_executable_the_proxy_resolved_and_its_arguments() {
    let bus = PrivateBus::start();
    let rules = bus.dir().join("rules.d");
    std::fs::create_dir_all(&rules).expect("rules dir");
    std::fs::write(
        rules.join("10-exe.rhai"),
        r#"rule("by-exe", |request, origin| {
            decline(`exe=${origin.verified_exe} args=${origin.verified_args} server=${origin.server}`)
        });"#,
    )
    .expect("rule");
    let config = format!("[policy]\nrules-dirs = [{:?}]\n", rules.display().to_string());
    let _daemon = Daemon::start(&bus, &config).await;

    // The server is started by name, through PATH, as a host would.
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/python/fake_server.py");
    let mut proxy = tokio::process::Command::new(binary("elicit"))
        .arg("--bus")
        .arg(bus.address())
        .args(["proxy", "--", "python3"])
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the proxy starts");
    let mut stdin = proxy.stdin.take().expect("stdin");
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"ask\"}}\n",
        )
        .await
        .expect("ask");

    eventually("the rule's decline in history", || async {
        !elicit_tests::history(&bus.connect().await).await.is_empty()
    })
    .await;
    let record = elicit_tests::history(&bus.connect().await).await.remove(0);
    let reason = record["reason"].as_str().expect("a reason").to_owned();
    let python = which_python3();
    assert!(reason.contains(&format!("exe={}", python.display())), "{reason}");
    assert!(reason.contains(&script.display().to_string()), "{reason}");
    drop(stdin);
}

/// `python3` as `exec` would find it, with symlinks resolved.
fn which_python3() -> std::path::PathBuf {
    elicit_tests::which("python3")
        .expect("python3 on PATH")
        .canonicalize()
        .expect("resolvable")
}
