//! The command line, run as a user would. Besides checking `--help`, this
//! integration test is what makes `cargo test --workspace` build the
//! `elicit-gtk` binary that the whole-system tests in `tests/` start.

use std::process::Command;

#[test]
fn help_describes_the_bus_option() {
    let out = Command::new(env!("CARGO_BIN_EXE_elicit-gtk"))
        .arg("--help")
        .output()
        .expect("elicit-gtk runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--bus"), "{text}");
}
