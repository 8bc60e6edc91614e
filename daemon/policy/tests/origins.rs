//! Self-declared origins against what the proxy verified, and paths that
//! climb out of the directory they name.

mod common;

use common::{confirmation, origin, write_rule};
use elicit_proto::dbus::Origin;
use elicitd_policy::{Policy, Remembered, Verdict};
use serde_json::json;

fn deployer(exe: Option<&str>, cwd: &str) -> Origin {
    Origin {
        verified_exe: exe.map(str::to_owned),
        verified_args: exe.map(|_| vec!["--stdio".to_owned()]),
        ..origin("deployer", Some(cwd))
    }
}

#[test]
fn the_readme_example_does_not_accept_a_cwd_that_climbs_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "20-deploy.rhai",
        r#"rule("deploy-confirmation", |request, origin| {
            if origin.server == "deployer" && is_within(origin.cwd, "/home/me/src/shop") {
                return accept();
            }
        });"#,
    );
    let policy = Policy::load(&[dir.path().to_path_buf()]).expect("loads");
    let inside = deployer(None, "/home/me/src/shop/sub");
    assert_eq!(
        policy.decide(&confirmation(), &inside, "s").verdict,
        Verdict::Accept(json!(null))
    );
    for outside in [
        "/home/me/src/shop/../../../../tmp",
        "/home/me/src/shop/..",
        "home/me/src/shop",
        "./shop",
    ] {
        let decision = policy.decide(&confirmation(), &deployer(None, outside), "s");
        assert_eq!(decision.verdict, Verdict::Ask, "{outside}: {decision:?}");
    }
}

#[test]
fn rules_see_what_the_proxy_verified_apart_from_what_the_client_says() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_rule(
        dir.path(),
        "20-exe.rhai",
        r#"rule("by-exe", |request, origin| {
            if origin.verified_exe == "/usr/bin/deployer" && origin.verified_args == ["--stdio"] {
                return accept();
            }
            if origin.verified_exe == () { return decline("unverified"); }
        });"#,
    );
    let policy = Policy::load(&[dir.path().to_path_buf()]).expect("loads");
    let real = deployer(Some("/usr/bin/deployer"), "/");
    assert_eq!(
        policy.decide(&confirmation(), &real, "s").verdict,
        Verdict::Accept(json!(null))
    );
    // Same name, other program: the server's name is only what it says.
    let impostor = deployer(Some("/tmp/evil"), "/");
    assert_eq!(
        policy.decide(&confirmation(), &impostor, "s").verdict,
        Verdict::Ask
    );
    let unverified = deployer(None, "/");
    assert_eq!(
        policy.decide(&confirmation(), &unverified, "s").verdict,
        Verdict::Decline
    );
}

#[test]
fn a_choice_remembered_for_a_verified_exe_ignores_servers_that_only_share_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sled::open(dir.path().join("db")).expect("sled opens");
    let store = Remembered::new(db.open_tree("remembered").expect("tree"));
    let id = store
        .remember_for(
            "deployer",
            Some("/usr/bin/deployer"),
            None,
            Verdict::Accept(json!({})),
        )
        .expect("stored");
    let policy = Policy::load(&[]).expect("loads");
    let real = deployer(Some("/usr/bin/deployer"), "/");
    let decision = policy.decide_with(&store, &confirmation(), &real, "s");
    assert_eq!(decision.decided_by, format!("remembered #{id}"));
    for other in [deployer(Some("/tmp/evil"), "/"), deployer(None, "/")] {
        let decision = policy.decide_with(&store, &confirmation(), &other, "s");
        assert_eq!(decision.verdict, Verdict::Ask, "{other:?}");
    }
}

#[test]
fn a_choice_remembered_for_a_directory_ignores_paths_that_climb_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sled::open(dir.path().join("db")).expect("sled opens");
    let store = Remembered::new(db.open_tree("remembered").expect("tree"));
    store
        .remember("deployer", Some("/home/me/src/shop"), Verdict::Accept(json!({})))
        .expect("stored");
    let policy = Policy::load(&[]).expect("loads");
    let climbing = deployer(None, "/home/me/src/shop/../../../../tmp");
    let decision = policy.decide_with(&store, &confirmation(), &climbing, "s");
    assert_eq!(decision.verdict, Verdict::Ask);
}
