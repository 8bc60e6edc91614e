//! The daemon's life without systemd: started by D-Bus activation on a bus
//! like `dbus-launch`'s (standard error on `/dev/null`), gone with that bus,
//! started again by the next one on the same state directory; a second
//! daemon on a held state directory names the holder; the logs land in a
//! private file that `elicit status` points to.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use elicit_tests::home::{Home, Reaper, owner_pid};
use elicit_tests::procs::exited;
use elicit_tests::{Daemon, PrivateBus, ask, binary, eventually, printed, within};
use serde_json::Value;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_leaves_with_its_bus_and_the_next_session_starts_it_again() {
    let home = Home::new();
    let log = home.state_dir().join("elicitd.log");

    let first = home.session();
    let (ok, said) = home.status(&first);
    assert!(ok, "elicit status activates the daemon: {said}");
    let pid = owner_pid(&first).await.expect("the daemon's pid");
    let _reap_first = Reaper(pid);
    assert!(
        said.contains(&format!("log:           {}", log.display())),
        "status points to the log file: {said}"
    );
    assert!(said.contains(&format!("pid:           {pid}")), "{said}");
    assert_eq!(mode(&home.state_dir()), 0o700, "the state directory is private");
    assert_eq!(mode(&log), 0o600, "the log file is private");
    assert_eq!(mode(&home.state_dir().join("elicitd.pid")), 0o600);

    // The session ends: its bus goes, and the daemon with it.
    drop(first);
    eventually("the daemon to leave with its bus", || async move { exited(pid) }).await;
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(
        logged.contains("elicitd stopping: its bus connection closed"),
        "{logged}"
    );

    // The next session's bus starts a new daemon on the same state
    // directory, which answers forms.
    let second = home.session();
    let (ok, said) = home.status(&second);
    assert!(ok, "the next session's activation works: {said}");
    let again = owner_pid(&second).await.expect("the daemon's pid");
    let _reap_second = Reaper(again);
    assert_ne!(again, pid);
    let asking = ask(
        &second,
        "Go on?",
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#,
        &[],
    );
    let broker = elicit_proto::dbus::Broker1Proxy::new(&second.connect().await)
        .await
        .expect("broker proxy");
    let id = within("the form to be queued", async {
        loop {
            let listed = broker.list_forms().await.unwrap_or_default();
            let forms: Vec<Value> = serde_json::from_str(&listed).unwrap_or_default();
            if let Some(form) = forms.first() {
                // The id is printed as `elicit list` shows it, quotes or not.
                break form["id"].to_string().trim_matches('"').to_owned();
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    let answered = Command::new(binary("elicit"))
        .args([
            "--bus",
            second.address(),
            "answer",
            &id,
            "--accept",
            r#"{"ok":true}"#,
        ])
        .output()
        .expect("elicit answer");
    assert!(answered.status.success(), "{answered:?}");
    let (printed, code) = printed(asking).await;
    assert_eq!((printed["action"].as_str(), code), (Some("accept"), Some(0)));

    drop(second);
    eventually("the second daemon to leave with its bus", || async move {
        exited(again)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_on_a_held_state_dir_names_the_holder() {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let holder = daemon.pid().expect("running");
    let other = PrivateBus::start();
    let output = Command::new(binary("elicitd"))
        .args(["--bus", other.address(), "--state-dir"])
        .arg(daemon.state_dir())
        .arg("--config")
        .arg(bus.dir().join("config.toml"))
        .output()
        .expect("elicitd runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "another elicitd (PID {holder}) holds the state directory {}",
            daemon.state_dir().display()
        )),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_whose_stderr_is_read_keeps_logging_there() {
    // The harness reads the daemon's standard error from a file: no log
    // file appears in the state directory.
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    // Daemon::start returns once the daemon owns its name, which it logs
    // being ready just after: under load the line may come later.
    eventually("the daemon's stderr to say it is ready", || async {
        daemon.log().contains("elicitd ready")
    })
    .await;
    assert!(!daemon.state_dir().join("elicitd.log").exists());
}
