//! `packaging/setup-build`, the first part of the README's command 1: on a
//! machine that has what the build and the demo need (tests/setup installs
//! it), it installs nothing, so it needs neither root nor apt. (That it
//! installs what a fresh root lacks is `packaging/fresh-root.sh`'s check.)

use std::path::Path;
use std::process::Command;

#[test]
fn with_everything_installed_it_changes_nothing_and_needs_no_apt() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/setup-build");
    // No apt-get, no sudo on its PATH: reaching for either fails the run.
    let empty = tempfile::tempdir().expect("temp dir");
    let bin = empty.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    for tool in ["dpkg-query", "grep", "id"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .expect("sh runs");
        let path = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        assert!(!path.is_empty(), "{tool} is missing");
        std::os::unix::fs::symlink(path, bin.join(tool)).expect("link");
    }
    let output = Command::new("/bin/sh")
        .arg(&script)
        .env("PATH", &bin)
        .output()
        .expect("setup-build runs");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        said.trim(),
        "packaging/setup-build: nothing to install (gcc libc6-dev dbus are installed)"
    );
}
