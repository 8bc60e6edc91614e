//! The secret guard fails closed: no rule that throws, runs past its budget
//! or comes first, and no remembered choice, keeps a secret-asking form
//! from being declined. Only the configuration switches it off.

mod common;

use std::path::PathBuf;

use common::{form, origin, text_field, write_rule};
use elicit_proto::Elicitation;
use elicitd_policy::{Decision, Policy, Remembered, SecretGuard, Verdict};
use serde_json::json;

const GUARD: &str = "built-in: secret-guard";

/// The request a hostile server picks to trip the rules below: its message
/// makes them fail, and its field asks for a password.
fn tripping_form() -> Elicitation {
    common::request(json!({
        "message": "trip",
        "requestedSchema": {"type": "object", "properties": {
            "value": {"type": "string", "description": "Your password"}
        }}
    }))
}

fn rules(name: &str, text: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(dir.path(), name, text);
    let dirs = vec![dir.path().to_path_buf()];
    (dir, dirs)
}

fn decide(dirs: &[PathBuf], request: &Elicitation) -> Decision {
    let policy = Policy::load(dirs).expect("the policy loads");
    policy.decide(request, &origin("srv", None), "s")
}

#[test]
fn a_rule_that_throws_first_does_not_skip_the_guard() {
    let (_dir, dirs) = rules(
        "00-throws.rhai",
        r#"rule("throws", |request, origin| { if request.message == "trip" { throw "boom"; } });"#,
    );
    // The rule does fail: a harmless form reaches it and it asks the human.
    let harmless =
        common::request(json!({"message": "trip", "requestedSchema": {"type": "object", "properties": {}}}));
    let decision = decide(&dirs, &harmless);
    assert_eq!(decision.decided_by, "00-throws.rhai: throws");
    assert!(decision.reason.unwrap_or_default().contains("boom"));
    let decision = decide(&dirs, &tripping_form());
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, GUARD);
}

#[test]
fn a_rule_over_its_operations_budget_does_not_skip_the_guard() {
    let (_dir, dirs) = rules(
        "00-spins.rhai",
        r#"rule("spins", |request, origin| { let n = 0; loop { n += 1; } });"#,
    );
    let decision = decide(&dirs, &tripping_form());
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, GUARD);
}

#[test]
fn a_rule_over_its_time_budget_does_not_skip_the_guard() {
    let (_dir, dirs) = rules(
        "00-slow.rhai",
        r#"rule("slow", |request, origin| { let s = "x"; for i in 0..100000000 { s = s.len().to_string(); } });"#,
    );
    let budget = elicitd_policy::Budget {
        max_operations: u64::MAX,
        rule_time: std::time::Duration::from_millis(50),
        ..Default::default()
    };
    let policy = Policy::load_with(&dirs, budget, Default::default()).expect("loads");
    let decision = policy.decide(&tripping_form(), &origin("srv", None), "s");
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, GUARD);
}

#[test]
fn a_rule_ordered_first_cannot_ask_or_accept_past_the_guard() {
    for verdict in [r#"ask("me")"#, r#"accept(#{ value: "hunter2" })"#, r#"cancel()"#] {
        let (_dir, dirs) = rules(
            "00-first.rhai",
            &format!(r#"rule("first", |request, origin| {verdict});"#),
        );
        let decision = decide(&dirs, &tripping_form());
        assert_eq!(decision.verdict, Verdict::Decline, "{verdict}");
        assert_eq!(decision.decided_by, GUARD, "{verdict}");
    }
}

#[test]
fn a_remembered_accept_does_not_skip_the_guard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sled::open(dir.path().join("db")).expect("sled opens");
    let store = Remembered::new(db.open_tree("remembered").expect("tree"));
    store
        .remember("srv", None, Verdict::Accept(json!({"value": "hunter2"})))
        .expect("stored");
    let policy = Policy::load(&[]).expect("loads");
    let decision = policy.decide_with(&store, &tripping_form(), &origin("srv", None), "s");
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, GUARD);
}

#[test]
fn an_empty_defaults_file_does_not_switch_the_guard_off() {
    let (_dir, dirs) = rules("50-elicitd-defaults.rhai", "");
    let decision = decide(&dirs, &text_field("password", None, None));
    assert_eq!(decision.decided_by, GUARD);
}

#[test]
fn the_configuration_switches_the_guard_off() {
    let policy = Policy::load(&[])
        .expect("loads")
        .with_secret_guard(SecretGuard::Off);
    assert_eq!(policy.secret_guard(), SecretGuard::Off);
    let decision = policy.decide(&text_field("password", None, None), &origin("srv", None), "s");
    assert_eq!(decision, Decision::default_ask());
}

#[test]
fn each_evasion_of_the_issue_is_caught() {
    let policy = Policy::load(&[]).expect("loads");
    let fields = [
        ("pw", None, None),
        ("pwd", None, None),
        ("x", Some("Passwort"), None),
        ("x", Some("Contraseña"), None),
        ("x", Some("Mot de passe"), None),
        ("x", Some("p\u{0430}ssword"), None),
        ("x", Some("pass\u{200b}word"), None),
        ("p_a_s_s_w_o_r_d", None, None),
        ("x", Some("CC#"), None),
        ("x", Some("Passwords"), None),
        ("x", Some("ｐａｓｓｗｏｒｄ"), None),
        (
            "password_name",
            Some("Password name"),
            Some("The actual password, not its name"),
        ),
    ];
    for (name, title, description) in fields {
        let decision = policy.decide(&text_field(name, title, description), &origin("srv", None), "s");
        assert_eq!(decision.decided_by, GUARD, "{name} {title:?} {description:?}");
    }
    let message = common::request(json!({
        "message": "Enter your password",
        "requestedSchema": {"type": "object", "properties": {"value": {"type": "string"}}}
    }));
    let decision = policy.decide(&message, &origin("srv", None), "s");
    assert_eq!(decision.decided_by, GUARD);
    assert!(decision.reason.unwrap_or_default().contains("message"));
    // And a neutral field under a harmless message stays the human's.
    let harmless = form(json!({"type": "object", "properties": {"value": {"type": "string"}}}));
    assert_eq!(
        policy.decide(&harmless, &origin("srv", None), "s"),
        Decision::default_ask()
    );
}
