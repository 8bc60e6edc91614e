//! Which file wins, in what order rules run, and what `check` reports.

mod common;

use std::path::PathBuf;

use common::{confirmation, decide, origin, text_field, url_request, write_rule};
use elicitd_policy::{Policy, Verdict};

fn dirs(dirs: &[&tempfile::TempDir]) -> Vec<PathBuf> {
    dirs.iter().map(|d| d.path().to_path_buf()).collect()
}

#[test]
fn a_later_directory_overrides_a_file_of_the_same_name() {
    let system = tempfile::tempdir().expect("tempdir");
    let user = tempfile::tempdir().expect("tempdir");
    write_rule(
        system.path(),
        "10-x.rhai",
        r#"rule("sys", |r, o| decline("system"));"#,
    );
    let user_file = write_rule(
        user.path(),
        "10-x.rhai",
        r#"rule("usr", |r, o| decline("user"));"#,
    );
    let dirs = dirs(&[&system, &user]);
    let decision = decide(&dirs, &confirmation(), "srv");
    assert_eq!(decision.reason.as_deref(), Some("user"));
    assert_eq!(decision.decided_by, "10-x.rhai: usr");
    let policy = Policy::load(&dirs).expect("loads");
    let files = policy.files();
    assert!(files.iter().any(|(path, _)| *path == user_file.as_path()));
    assert_eq!(
        files
            .iter()
            .filter(|(path, _)| path.ends_with("10-x.rhai"))
            .count(),
        1
    );
}

#[test]
fn files_run_in_name_order_and_rules_in_registration_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(dir.path(), "30-c.rhai", r#"rule("c", |r, o| decline("c"));"#);
    write_rule(
        dir.path(),
        "20-b.rhai",
        r#"rule("pass", |r, o| ()); rule("second", |r, o| cancel("b")); rule("third", |r, o| decline());"#,
    );
    write_rule(dir.path(), "10-a.rhai", r#"rule("a", |r, o| ());"#);
    // Not rules files: wrong suffix, hidden, a directory.
    write_rule(dir.path(), "05-notes.txt", r#"rule("txt", |r, o| decline());"#);
    write_rule(
        dir.path(),
        ".05-hidden.rhai",
        r#"rule("hidden", |r, o| decline());"#,
    );
    std::fs::create_dir(dir.path().join("06-dir.rhai")).expect("mkdir");
    let decision = decide(&dirs(&[&dir]), &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Cancel);
    assert_eq!(decision.decided_by, "20-b.rhai: second");
}

#[test]
fn a_user_file_before_the_defaults_wins_over_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(dir.path(), "10-ci.rhai", r#"rule("ci", |r, o| cancel("CI"));"#);
    let decision = decide(&dirs(&[&dir]), &url_request("http://example.com/"), "srv");
    assert_eq!(decision.verdict, Verdict::Cancel);
    assert_eq!(decision.decided_by, "10-ci.rhai: ci");
}

#[test]
fn no_user_file_comes_before_the_secret_guard() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "00-first.rhai",
        r#"rule("ask-everything", |r, o| ask("me first"));"#,
    );
    let decision = decide(&dirs(&[&dir]), &text_field("password", None, None), "srv");
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, "built-in: secret-guard");
}

#[test]
fn an_empty_file_of_the_same_name_switches_the_defaults_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(dir.path(), "50-elicitd-defaults.rhai", "// off\n");
    let decision = decide(&dirs(&[&dir]), &url_request("http://example.com/"), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "default");
    // The secret guard is no rules file: only the configuration turns it off.
    let decision = decide(&dirs(&[&dir]), &text_field("password", None, None), "srv");
    assert_eq!(decision.verdict, Verdict::Decline);
}

#[test]
fn a_broken_override_leaves_the_file_it_would_replace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = write_rule(dir.path(), "50-elicitd-defaults.rhai", "rule(\"x\", |r, o| {");
    let policy = Policy::load(&dirs(&[&dir])).expect("loads");
    assert!(policy.problems().iter().any(|(path, _)| *path == broken));
    let decision = policy.decide(&url_request("http://example.com/"), &origin("srv", None), "s");
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, "50-elicitd-defaults.rhai: url-scheme");
}

#[test]
fn a_syntax_error_is_skipped_at_load_and_reported_by_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = write_rule(dir.path(), "10-broken.rhai", r#"rule("b", |r, o| decline("x")"#);
    let good = write_rule(
        dir.path(),
        "20-good.rhai",
        r#"rule("g", |r, o| decline("good"));"#,
    );
    let dirs = dirs(&[&dir]);

    let policy = Policy::load(&dirs).expect("loads despite the broken file");
    assert_eq!(policy.problems().len(), 1);
    assert_eq!(policy.problems()[0].0, broken);
    let decision = policy.decide(&confirmation(), &origin("srv", None), "s");
    assert_eq!(decision.reason.as_deref(), Some("good"));

    let report = Policy::check(&dirs);
    let result = |path: &PathBuf| {
        report
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
            .expect("in the report")
    };
    assert!(result(&broken).is_err());
    assert_eq!(result(&good), Ok(()));
    let builtin = report
        .iter()
        .find(|(p, _)| p.ends_with("50-elicitd-defaults.rhai"))
        .expect("the built-in is checked");
    assert_eq!(builtin.1, Ok(()));
}

#[test]
fn check_catches_what_would_fail_at_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("10-undefined.rhai", r#"rule("u", |r, o| decline(nowhere));"#),
        ("11-loop.rhai", "loop { }"),
        ("12-eval.rhai", r#"eval("1 + 1");"#),
        ("13-import.rhai", r#"import "/etc/passwd" as p;"#),
        ("14-bad-rule.rhai", r#"rule(42, 43);"#),
    ];
    let paths: Vec<PathBuf> = cases
        .iter()
        .map(|(name, text)| write_rule(dir.path(), name, text))
        .collect();
    let report = Policy::check(&dirs(&[&dir]));
    for path in &paths {
        let (_, result) = report.iter().find(|(p, _)| p == path).expect("in the report");
        assert!(result.is_err(), "{} passed the check", path.display());
    }
    let policy = Policy::load(&dirs(&[&dir])).expect("loads");
    assert_eq!(policy.problems().len(), cases.len());
}

#[test]
fn rule_registration_at_decision_time_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "10-late.rhai",
        r#"rule("late", |r, o| { rule("more", |r, o| ()); decline() });"#,
    );
    let decision = decide(&dirs(&[&dir]), &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "10-late.rhai: late");
}

#[test]
fn captured_state_does_not_leak_between_decisions() {
    // Rules get copies of request and origin; changing them changes nothing
    // for the next rule or the next decision.
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "10-mutate.rhai",
        r#"rule("m", |r, o| { r.mode = "url"; o.server = "evil"; });"#,
    );
    write_rule(
        dir.path(),
        "20-see.rhai",
        r#"rule("s", |r, o| if r.mode == "form" && o.server == "srv" { decline("intact") });"#,
    );
    let decision = decide(&dirs(&[&dir]), &confirmation(), "srv");
    assert_eq!(decision.reason.as_deref(), Some("intact"));
}

#[test]
fn missing_directories_are_fine() {
    let decision = decide(
        &[PathBuf::from("/nonexistent/elicitd/rules.d")],
        &confirmation(),
        "srv",
    );
    assert_eq!(decision.verdict, Verdict::Ask);
}

#[test]
fn standard_dirs_are_system_then_admin_then_user() {
    let dirs = Policy::standard_dirs();
    assert_eq!(dirs[0], PathBuf::from("/usr/share/elicitd/rules.d"));
    assert_eq!(dirs[1], PathBuf::from("/etc/elicitd/rules.d"));
    if let Some(user) = dirs.get(2) {
        assert!(user.ends_with("elicitd/rules.d"), "{}", user.display());
    }
}
