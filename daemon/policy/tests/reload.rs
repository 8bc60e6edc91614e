//! The watcher reloads rules when their directories change.

mod common;

use std::time::Duration;

use common::{confirmation, eventually, origin, write_rule};
use elicitd_policy::{PolicyWatcher, Verdict};

/// Generous: a loaded two-core machine can be slow to deliver events.
const LIMIT: Duration = Duration::from_secs(20);

fn verdict(watcher: &PolicyWatcher) -> Verdict {
    watcher
        .current()
        .decide(&confirmation(), &origin("srv", None), "s")
        .verdict
}

#[test]
fn writing_changing_and_removing_a_file_takes_effect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let watcher = PolicyWatcher::start(vec![dir.path().to_path_buf()]).expect("watching");
    assert_eq!(verdict(&watcher), Verdict::Ask);

    let path = write_rule(dir.path(), "10-ci.rhai", r#"rule("ci", |r, o| decline("CI"));"#);
    assert!(
        eventually(LIMIT, || verdict(&watcher) == Verdict::Decline),
        "new file not loaded"
    );

    write_rule(dir.path(), "10-ci.rhai", r#"rule("ci", |r, o| cancel("CI"));"#);
    assert!(
        eventually(LIMIT, || verdict(&watcher) == Verdict::Cancel),
        "change not loaded"
    );

    std::fs::remove_file(&path).expect("remove");
    assert!(
        eventually(LIMIT, || verdict(&watcher) == Verdict::Ask),
        "removal not noticed"
    );
}

#[test]
fn a_directory_created_later_is_watched() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("config").join("elicitd").join("rules.d");
    let watcher = PolicyWatcher::start(vec![dir.clone()]).expect("watching");
    assert_eq!(verdict(&watcher), Verdict::Ask);
    // Created a level at a time, as `mkdir -p` does, with the file right after.
    write_rule(&dir, "10-ci.rhai", r#"rule("ci", |r, o| decline("CI"));"#);
    // The file may land before the new directory is watched; the reload that
    // the directory's creation triggers reads it either way.
    assert!(
        eventually(LIMIT, || verdict(&watcher) == Verdict::Decline),
        "not loaded"
    );
    write_rule(&dir, "10-ci.rhai", r#"rule("ci", |r, o| cancel("CI"));"#);
    assert!(
        eventually(LIMIT, || verdict(&watcher) == Verdict::Cancel),
        "change not loaded"
    );
}

#[test]
fn a_broken_edit_keeps_the_other_files_working() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "20-good.rhai",
        r#"rule("good", |r, o| decline("good"));"#,
    );
    let watcher = PolicyWatcher::start(vec![dir.path().to_path_buf()]).expect("watching");
    assert_eq!(verdict(&watcher), Verdict::Decline);
    write_rule(dir.path(), "10-typo.rhai", r#"rule("typo", |r, o| cancel("#);
    assert!(
        eventually(LIMIT, || !watcher.current().problems().is_empty()),
        "the broken file was not loaded"
    );
    assert_eq!(verdict(&watcher), Verdict::Decline);
}
