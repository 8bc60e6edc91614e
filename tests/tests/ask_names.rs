//! `elicit ask` names its asker: `--server`, `--host` and `--icon` reach
//! the front-end in the origin, and without `--server` the asker is the
//! program that started `elicit ask`, not "an unnamed server". (Each
//! front-end shows them: see `tui.rs`, `gtk.rs` and `notify.rs`.)

use elicit_tests::{Daemon, PrivateBus, TestFrontend, ask, binary, printed, within};
use serde_json::json;

const CONFIRM: &str = r#"{"type": "object", "properties": {}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_options_name_the_server_the_host_and_the_icon() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "test", 10).await;
    let flags = elicit_tests::ASKER_FLAGS;
    let asked = ask(&bus, "Deploy?", CONFIRM, &flags);
    let shown = frontend.next_show().await;
    assert_eq!(shown.server.as_deref(), Some("deployer"));
    assert_eq!(shown.host.as_deref(), Some("release script"));
    assert_eq!(shown.icon.as_deref(), Some("utilities-terminal"));
    frontend
        .answer(&shown, "accept", json!({}))
        .await
        .expect("answer");
    assert_eq!(printed(asked).await.1, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_server_name_the_asker_is_the_program_that_ran_it() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "test", 10).await;
    // A script, run through its #! line as a user's script is: its file
    // name is the process's name.
    let script = bus.dir().join("nightly-backup");
    let schema = bus.dir().join("confirm.json");
    std::fs::write(&schema, CONFIRM).expect("write schema");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n'{}' --bus '{}' ask --message 'Back up now?' --schema '{}'\n",
            binary("elicit").display(),
            bus.address(),
            schema.display()
        ),
    )
    .expect("write script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let child = tokio::process::Command::new(&script)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the script starts");
    let shown = frontend.next_show().await;
    assert_eq!(shown.server.as_deref(), Some("nightly-backup"));
    assert_eq!(shown.host.as_deref(), Some("elicit ask"));
    assert_eq!(shown.icon, None);
    frontend
        .answer(&shown, "decline", serde_json::Value::Null)
        .await
        .expect("answer");
    let output = within("the script to end", child.wait_with_output())
        .await
        .expect("script");
    assert_eq!(output.status.code(), Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_icon_that_is_a_path_is_refused() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let asked = ask(&bus, "Deploy?", CONFIRM, &["--icon", "/home/me/.ssh/id_ed25519"]);
    let output = within("elicit ask to end", asked.wait_with_output())
        .await
        .expect("runs");
    assert_eq!(output.status.code(), Some(2), "a usage error");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not a path"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
