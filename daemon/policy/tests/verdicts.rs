//! Each verdict, and what becomes of rules that misbehave.

mod common;

use std::time::{Duration, Instant};

use common::{confirmation, decide, form, origin, text_field, write_rule};
use elicit_proto::Limits;
use elicitd_policy::{Budget, Policy, Verdict};
use serde_json::json;

fn one_rule(body: &str) -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "10-test.rhai",
        &format!("rule(\"test\", |request, origin| {{ {body} }});"),
    );
    let dirs = vec![dir.path().to_path_buf()];
    (dir, dirs)
}

fn contact_form() -> elicit_proto::Elicitation {
    form(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "minimum": 0},
            "subscribe": {"type": "boolean"}
        },
        "required": ["name"]
    }))
}

#[test]
fn no_rule_speaks_so_the_human_is_asked() {
    let (_dir, dirs) = one_rule("()");
    let decision = decide(&dirs, &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "default");
}

#[test]
fn decline_with_reason() {
    let (_dir, dirs) = one_rule(r#"decline("not today")"#);
    let decision = decide(&dirs, &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, "10-test.rhai: test");
    assert_eq!(decision.reason.as_deref(), Some("not today"));
}

#[test]
fn cancel_and_explicit_ask() {
    let (_dir, dirs) = one_rule(r#"cancel()"#);
    assert_eq!(decide(&dirs, &confirmation(), "srv").verdict, Verdict::Cancel);
    let (_dir, dirs) = one_rule(r#"ask("look at this one")"#);
    let decision = decide(&dirs, &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "10-test.rhai: test");
}

#[test]
fn plain_strings_are_verdicts_too() {
    let (_dir, dirs) = one_rule(r#""decline""#);
    assert_eq!(decide(&dirs, &confirmation(), "srv").verdict, Verdict::Decline);
    let (_dir, dirs) = one_rule(r#""accept""#);
    assert_eq!(
        decide(&dirs, &confirmation(), "srv").verdict,
        Verdict::Accept(serde_json::Value::Null)
    );
}

#[test]
fn accept_with_valid_content() {
    let (_dir, dirs) = one_rule(r#"accept(#{ name: "Ada", age: 36, subscribe: false })"#);
    let decision = decide(&dirs, &contact_form(), "srv");
    assert_eq!(
        decision.verdict,
        Verdict::Accept(json!({"name": "Ada", "age": 36, "subscribe": false}))
    );
    let answer = decision.verdict.to_answer().expect("an answer");
    assert_eq!(
        answer.content,
        Some(json!({"name": "Ada", "age": 36, "subscribe": false}))
    );
}

#[test]
fn accept_with_invalid_content_asks_the_human() {
    for content in [
        r#"#{ age: 36 }"#,                    // required name missing
        r#"#{ name: "Ada", age: -1 }"#,       // below the minimum
        r#"#{ name: "Ada", colour: "red" }"#, // not asked for
        r#"#{ name: 42 }"#,                   // wrong type
    ] {
        let (_dir, dirs) = one_rule(&format!("accept({content})"));
        let decision = decide(&dirs, &contact_form(), "srv");
        assert_eq!(decision.verdict, Verdict::Ask, "{content}");
        assert_eq!(decision.decided_by, "10-test.rhai: test");
        let reason = decision.reason.unwrap_or_default();
        assert!(reason.contains("does not fit the form"), "{content}: {reason}");
    }
}

#[test]
fn nonsense_asks_the_human() {
    for body in [
        "42",
        r#""yes please""#,
        r#"#{ verdict: "accept", content: #{ name: "x" }, extra: 1 }"#,
        r#"#{ verdict: "decline", content: #{ name: "x" } }"#,
        r#"#{ reason: "no verdict" }"#,
        "[1, 2]",
    ] {
        let (_dir, dirs) = one_rule(body);
        let decision = decide(&dirs, &contact_form(), "srv");
        assert_eq!(decision.verdict, Verdict::Ask, "{body}");
        assert!(decision.reason.is_some(), "{body}");
    }
}

#[test]
fn an_error_asks_the_human_and_stops_later_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "10-broken.rhai",
        r#"rule("broken", |request, origin| request.fields[99].name);"#,
    );
    write_rule(
        dir.path(),
        "20-accept.rhai",
        r#"rule("yes", |request, origin| accept());"#,
    );
    let decision = decide(&[dir.path().to_path_buf()], &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "10-broken.rhai: broken");
}

#[test]
fn rules_see_the_request_and_the_origin() {
    let (_dir, dirs) = one_rule(
        r#"
        let f = request.fields[0];
        if request.mode == "form" && request.message == "Please fill this in"
            && f.name == "deploy_target" && f.title == "Target" && f.description == ()
            && f.kind == "text" && f.required == false && f.label == "Target"
            && origin.server == "deployer" && origin.host == "test-host"
            && origin.command == "deployer --stdio" && origin.cwd == "/src/app"
            && origin.pid == 4242 && origin.session == "session-1" {
            decline("seen")
        }
        "#,
    );
    let policy = Policy::load(&dirs).expect("loads");
    let decision = policy.decide(
        &text_field("deploy_target", Some("Target"), None),
        &origin("deployer", Some("/src/app")),
        "session-1",
    );
    assert_eq!(decision.reason.as_deref(), Some("seen"), "{decision:?}");
}

#[test]
fn url_requests_show_url_and_host() {
    let (_dir, dirs) = one_rule(
        r#"if request.mode == "url" && request.host == "auth.example.com"
               && request.url == "https://auth.example.com/login?x=1" && request.scheme == "https" { accept() }"#,
    );
    let decision = decide(
        &dirs,
        &common::url_request("https://auth.example.com/login?x=1"),
        "srv",
    );
    assert_eq!(decision.verdict, Verdict::Accept(serde_json::Value::Null));
    assert_eq!(decision.verdict.to_answer().and_then(|a| a.content), None);
}

#[test]
fn endless_loop_falls_through_to_ask() {
    let (_dir, dirs) = one_rule("loop { }");
    let decision = decide(&dirs, &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "10-test.rhai: test");
}

#[test]
fn huge_allocations_fall_through_to_ask() {
    for body in [
        "let a = []; a.pad(1_000_000_000, 0); decline()",
        r#"let s = "x"; loop { s += s; } decline()"#,
        "let m = #{}; for i in 0..1_000_000 { m[`k${i}`] = i; } decline()",
        "let b = blob(1_000_000_000); decline()",
        r#"let s = "x".pad(1_000_000_000, 'y'); decline()"#,
    ] {
        let (_dir, dirs) = one_rule(body);
        let decision = decide(&dirs, &confirmation(), "srv");
        assert_eq!(decision.verdict, Verdict::Ask, "{body}");
        assert!(decision.reason.is_some(), "{body}");
    }
}

#[test]
fn deep_recursion_falls_through_to_ask() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "10-deep.rhai",
        "fn down(n) { down(n + 1) }\nrule(\"deep\", |request, origin| down(0));",
    );
    let decision = decide(&[dir.path().to_path_buf()], &confirmation(), "srv");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "10-deep.rhai: deep");
}

#[test]
fn a_slow_rule_stays_within_its_budget() {
    let (_dir, dirs) = one_rule("let n = 0; loop { n += 1; }");
    let budget = Budget {
        rule_time: Duration::from_millis(100),
        max_operations: u64::MAX,
        ..Budget::default()
    };
    let policy = Policy::load_with(&dirs, budget, Limits::default()).expect("loads");
    let started = Instant::now();
    let decision = policy.decide(&confirmation(), &origin("srv", None), "s");
    let took = started.elapsed();
    assert_eq!(decision.verdict, Verdict::Ask);
    assert!(decision.reason.unwrap_or_default().contains("time budget"));
    // Generous against a loaded machine; without the time limit this never ends.
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn the_decision_budget_skips_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Passes, but only after more than the whole decision may take.
    write_rule(
        dir.path(),
        "10-slow.rhai",
        r#"rule("slow", |request, origin| { let n = 0; while n < 50_000 { n += 1; } });"#,
    );
    write_rule(
        dir.path(),
        "20-accept.rhai",
        r#"rule("yes", |request, origin| accept());"#,
    );
    let budget = Budget {
        rule_time: Duration::from_secs(60),
        decision_time: Duration::from_millis(2),
        ..Budget::default()
    };
    let policy = Policy::load_with(&[dir.path().to_path_buf()], budget, Limits::default()).expect("loads");
    let decision = policy.decide(&confirmation(), &origin("srv", None), "s");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "20-accept.rhai: yes", "{decision:?}");
    assert!(decision.reason.unwrap_or_default().contains("ran out of time"));
}

#[test]
fn the_policy_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Policy>();
    assert_send_sync::<elicitd_policy::PolicyWatcher>();
    assert_send_sync::<elicitd_policy::Remembered>();
}
