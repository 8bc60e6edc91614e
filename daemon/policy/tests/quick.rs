//! Deciding within a quick bound (`Policy::decide_among_within`): what
//! decides in time decides exactly as the whole budget would, and what
//! needs longer is handed back undecided rather than called failed.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{confirmation, origin, text_field, write_rule};
use elicitd_policy::{Policy, Verdict};

/// The daemon's bound.
const QUICK: Duration = Duration::from_millis(1);
/// A bound no test machine, however loaded, runs past for a one-line rule:
/// these tests are about what a decision in time says, not how fast it is.
const IN_TIME: Duration = Duration::from_secs(30);

fn policy(name: &str, text: &str) -> (tempfile::TempDir, Policy) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(dir.path(), name, text);
    let dirs: Vec<PathBuf> = vec![dir.path().to_path_buf()];
    let policy = Policy::load(&dirs).expect("the policy loads");
    (dir, policy)
}

#[test]
fn a_rule_that_decides_in_time_decides_as_the_whole_budget_would() {
    let (_dir, policy) = policy(
        "10-decline.rhai",
        r#"rule("no-deploys", |request, origin| { if origin.server == "deployer" { return decline("not today"); } });"#,
    );
    let form = confirmation();
    for server in ["deployer", "other"] {
        let quick = policy.decide_among_within(&[], &form, &origin(server, None), "s", IN_TIME);
        let whole = policy.decide_among(&[], &form, &origin(server, None), "s");
        assert_eq!(quick, Some(whole));
    }
}

#[test]
fn a_rule_that_needs_longer_is_handed_back_not_failed() {
    // About a million operations: inside the operations budget, and far
    // more than a millisecond of Rhai on any machine.
    let (_dir, policy) = policy(
        "10-slow.rhai",
        r#"rule("slow", |request, origin| { let n = 0; while n < 150000 { n += 1; } return decline("counted"); });"#,
    );
    let form = confirmation();
    let quick = policy.decide_among_within(&[], &form, &origin("srv", None), "s", QUICK);
    assert!(quick.is_none(), "a slow rule was decided quickly: {quick:?}");
    let whole = policy.decide_among(&[], &form, &origin("srv", None), "s");
    assert_eq!(whole.verdict, Verdict::Decline, "{whole:?}");
    assert_eq!(whole.decided_by, "10-slow.rhai: slow");
}

#[test]
fn a_rule_that_fails_in_time_fails_as_the_whole_budget_would() {
    let (_dir, policy) = policy(
        "10-throws.rhai",
        r#"rule("throws", |request, origin| { throw "boom"; });"#,
    );
    let quick = policy
        .decide_among_within(&[], &confirmation(), &origin("srv", None), "s", IN_TIME)
        .expect("a rule that throws at once has decided");
    assert_eq!(quick.verdict, Verdict::Ask);
    assert_eq!(quick.decided_by, "10-throws.rhai: throws");
    assert!(quick.reason.unwrap_or_default().contains("boom"));
}

#[test]
fn the_secret_guard_declines_before_any_bound() {
    let (_dir, policy) = policy("10-slow.rhai", r#"rule("slow", |request, origin| { loop {} });"#);
    let secret = text_field("password", None, None);
    let quick = policy
        .decide_among_within(&[], &secret, &origin("srv", None), "s", Duration::ZERO)
        .expect("the guard needs no rule");
    assert_eq!(quick.verdict, Verdict::Decline);
    assert_eq!(quick.decided_by, "built-in: secret-guard");
    // And no bound at all leaves the rules undecided, not failed.
    let quick = policy.decide_among_within(&[], &confirmation(), &origin("srv", None), "s", Duration::ZERO);
    assert!(quick.is_none(), "{quick:?}");
}
