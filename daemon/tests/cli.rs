//! `elicitd`'s command line, run as a user would. Besides checking it, this
//! integration test is what makes `cargo test --workspace` build the
//! `elicitd` binary that the whole-system tests in `tests/` start.

use std::process::Command;

fn elicitd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_elicitd"))
        .args(args)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .output()
        .expect("elicitd runs")
}

#[test]
fn help_names_the_options_and_version_the_release() {
    let help = elicitd(&["--help"]);
    assert!(help.status.success(), "{help:?}");
    let text = String::from_utf8_lossy(&help.stdout);
    for option in ["--bus", "--state-dir", "--config", "--asker-socket"] {
        assert!(text.contains(option), "{option} missing from:\n{text}");
    }
    let version = elicitd(&["--version"]);
    assert!(version.status.success(), "{version:?}");
    let text = String::from_utf8_lossy(&version.stdout);
    assert!(text.contains(env!("CARGO_PKG_VERSION")), "{text}");
}

#[test]
fn an_unknown_option_is_refused_by_name() {
    let out = elicitd(&["--no-such-option"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("--no-such-option"), "{text}");
}
