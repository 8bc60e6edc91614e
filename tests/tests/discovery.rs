//! One discovery record per bus. Two daemons of one user on two private
//! buses, sharing a `$HOME`, each keep their own record: the second does
//! not overwrite the first's, and does not remove it when it stops. A
//! command whose host filtered the environment (no
//! `DBUS_SESSION_BUS_ADDRESS`, no `XDG_RUNTIME_DIR`) then finds the daemon
//! whose bus answers, passing over the record a killed daemon left.

use std::path::Path;
use std::process::{Command, Stdio};

use elicit_tests::procs::{exited, kill};
use elicit_tests::{Daemon, PrivateBus, binary, bus_records, eventually};

/// `elicit status` run as an env-stripping host runs it: `HOME` and `PATH`
/// only. Whether it reached a broker, and what it said.
fn stripped_status(home: &Path) -> (bool, String) {
    let output = Command::new(binary("elicit"))
        .arg("status")
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .output()
        .expect("elicit status runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}

fn addresses(home: &Path) -> Vec<String> {
    bus_records(home)
        .into_iter()
        .map(|(_, address)| address)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_on_another_bus_leaves_the_first_ones_record() {
    let home = tempfile::tempdir().expect("home");
    let env = [("HOME", Some(home.path().to_str().expect("utf-8 path")))];
    let first_bus = PrivateBus::start();
    let second_bus = PrivateBus::start();
    let _first = Daemon::start_with_env(&first_bus, "", &env).await;
    eventually("the first daemon's record", || async {
        addresses(home.path()).contains(&first_bus.address().to_owned())
    })
    .await;
    let mut second = Daemon::start_with_env(&second_bus, "", &env).await;
    eventually("the second daemon's record beside the first's", || async {
        let recorded = addresses(home.path());
        recorded.contains(&second_bus.address().to_owned())
            && recorded.contains(&first_bus.address().to_owned())
    })
    .await;
    for (path, _) in bus_records(home.path()) {
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).expect("stat").permissions());
        assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    }

    // The second stops cleanly: its own record goes, the first's stays.
    let pid = second.pid().expect("pid");
    kill("-TERM", pid);
    eventually("the second daemon to exit", || async { exited(pid) }).await;
    second.kill9();
    eventually("the second daemon's record to be removed", || async {
        !addresses(home.path()).contains(&second_bus.address().to_owned())
    })
    .await;
    assert_eq!(addresses(home.path()), [first_bus.address().to_owned()]);
    let (found, said) = stripped_status(home.path());
    assert!(found && said.contains("elicitd"), "{said}");

    // A daemon killed outright leaves its record behind; its bus lives on
    // with no broker, and the finder passes over it to the first.
    let mut third = Daemon::start_with_env(&second_bus, "", &env).await;
    eventually("the third daemon's record", || async {
        addresses(home.path()).contains(&second_bus.address().to_owned())
    })
    .await;
    third.kill9();
    assert_eq!(
        bus_records(home.path()).len(),
        2,
        "the killed daemon's record stays"
    );
    let (found, said) = stripped_status(home.path());
    assert!(found && said.contains("elicitd"), "{said}");
}
