//! Remembered choices: stored as data, applied before the rules.

mod common;

use common::{confirmation, form, origin, text_field, write_rule};
use elicitd_policy::{Policy, Remembered, Verdict};
use serde_json::json;

fn store() -> (tempfile::TempDir, Remembered) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sled::open(dir.path().join("db")).expect("sled opens");
    let tree = db.open_tree("remembered").expect("tree opens");
    (dir, Remembered::new(tree))
}

#[test]
fn remember_list_forget() {
    let (_dir, store) = store();
    let a = store
        .remember("deployer", None, Verdict::Decline)
        .expect("stored");
    let b = store
        .remember("deployer", Some("/src/app"), Verdict::Accept(json!({})))
        .expect("stored");
    assert_ne!(a, b);
    let listed = store.list().expect("listed");
    assert_eq!(listed.iter().map(|c| c.id).collect::<Vec<_>>(), [a, b]);
    assert_eq!(listed[1].cwd.as_deref(), Some("/src/app"));
    assert_eq!(listed[1].verdict, Verdict::Accept(json!({})));
    assert!(store.forget(a).expect("forgotten"));
    assert!(!store.forget(a).expect("already gone"));
    assert_eq!(store.list().expect("listed").len(), 1);
    // Ids are never reused.
    let c = store.remember("other", None, Verdict::Cancel).expect("stored");
    assert!(c > b);
}

#[test]
fn remembered_choices_apply_before_the_rules() {
    let (_dir, store) = store();
    let rules = tempfile::tempdir().expect("tempdir");
    write_rule(
        rules.path(),
        "10-all.rhai",
        r#"rule("all", |r, o| decline("rule"));"#,
    );
    let policy = Policy::load(&[rules.path().to_path_buf()]).expect("loads");
    let id = store
        .remember("deployer", None, Verdict::Accept(json!({})))
        .expect("stored");

    let decision = policy.decide_with(&store, &confirmation(), &origin("deployer", None), "s");
    assert_eq!(decision.verdict, Verdict::Accept(json!({})));
    assert_eq!(decision.decided_by, format!("remembered #{id}"));

    // Another server: the rules decide.
    let decision = policy.decide_with(&store, &confirmation(), &origin("other", None), "s");
    assert_eq!(decision.decided_by, "10-all.rhai: all");

    store.forget(id).expect("forgotten");
    let decision = policy.decide_with(&store, &confirmation(), &origin("deployer", None), "s");
    assert_eq!(decision.decided_by, "10-all.rhai: all");
}

#[test]
fn a_directory_choice_applies_in_that_directory_and_below_and_wins() {
    let (_dir, store) = store();
    let policy = Policy::load(&[]).expect("loads");
    let everywhere = store.remember("deployer", None, Verdict::Cancel).expect("stored");
    let here = store
        .remember("deployer", Some("/src/app"), Verdict::Accept(json!({})))
        .expect("stored");
    let decide = |cwd: Option<&str>| {
        policy
            .decide_with(&store, &confirmation(), &origin("deployer", cwd), "s")
            .decided_by
    };
    assert_eq!(decide(Some("/src/app")), format!("remembered #{here}"));
    assert_eq!(decide(Some("/src/app/sub")), format!("remembered #{here}"));
    assert_eq!(decide(Some("/src/app2")), format!("remembered #{everywhere}"));
    assert_eq!(decide(None), format!("remembered #{everywhere}"));
}

#[test]
fn a_remembered_accept_that_does_not_fit_leaves_it_to_the_rules() {
    let (_dir, store) = store();
    let policy = Policy::load(&[]).expect("loads");
    store
        .remember("srv", None, Verdict::Accept(json!({})))
        .expect("stored");
    let request = form(json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    }));
    let decision = policy.decide_with(&store, &request, &origin("srv", None), "s");
    assert_eq!(decision.verdict, Verdict::Ask);
    assert_eq!(decision.decided_by, "default");
    // An optional field is not answered by a remembered confirmation either,
    // and so the secret guard still sees the form.
    let decision = policy.decide_with(
        &store,
        &text_field("password", None, None),
        &origin("srv", None),
        "s",
    );
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, "built-in: secret-guard");
    // A remembered answer that gives every field applies.
    let id = store
        .remember("srv", None, Verdict::Accept(json!({"name": "Ada"})))
        .expect("stored");
    let decision = policy.decide_with(&store, &request, &origin("srv", None), "s");
    assert_eq!(decision.decided_by, format!("remembered #{id}"));
}

#[test]
fn choices_survive_reopening_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let id = {
        let db = sled::open(dir.path().join("db")).expect("sled opens");
        let store = Remembered::new(db.open_tree("remembered").expect("tree"));
        store.remember("srv", None, Verdict::Decline).expect("stored")
    };
    let db = sled::open(dir.path().join("db")).expect("sled reopens");
    let store = Remembered::new(db.open_tree("remembered").expect("tree"));
    let listed = store.list().expect("listed");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, id);
    assert_eq!(listed[0].describe(), "always decline for srv");
}
