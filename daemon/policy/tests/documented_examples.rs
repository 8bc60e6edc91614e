//! The example rules in RULES.md load and do what the text says.

mod common;

use std::path::PathBuf;

use common::{confirmation, form, origin, url_request};
use elicit_proto::dbus::Origin;
use elicitd_policy::{Policy, Verdict};
use serde_json::json;

const RULES_MD: &str = include_str!("../RULES.md");

/// Writes each `rhai` block whose first line names a `rules.d` file into a
/// fresh directory; returns the directory and the file names.
fn example_dir() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut names = Vec::new();
    for block in RULES_MD.split("```rhai\n").skip(1) {
        let text = block.split("```").next().expect("a closed block");
        let first = text.lines().next().unwrap_or_default();
        let Some(name) = first.strip_prefix("// ").and_then(|p| p.rsplit('/').next()) else {
            continue;
        };
        if name.ends_with(".rhai") && first.contains("rules.d/") {
            std::fs::write(dir.path().join(name), text).expect("write");
            names.push(name.to_owned());
        }
    }
    (dir, names)
}

#[test]
fn every_example_passes_the_check() {
    let (dir, names) = example_dir();
    assert_eq!(
        names,
        [
            "20-example.rhai",
            "00-ci.rhai",
            "20-deploy.rhai",
            "10-approved.rhai"
        ]
    );
    for (path, result) in Policy::check(&[dir.path().to_path_buf()]) {
        assert_eq!(result, Ok(()), "{}", path.display());
    }
}

fn only(name: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
    let (dir, _) = example_dir();
    for entry in std::fs::read_dir(dir.path()).expect("list") {
        let path = entry.expect("entry").path();
        if !path.ends_with(name) {
            std::fs::remove_file(path).expect("remove");
        }
    }
    let dirs = vec![dir.path().to_path_buf()];
    (dir, dirs)
}

#[test]
fn the_ci_rule_declines_everything() {
    let (_dir, dirs) = only("00-ci.rhai");
    let policy = Policy::load(&dirs).expect("loads");
    for request in [confirmation(), url_request("https://example.com/")] {
        let decision = policy.decide(&request, &origin("anything", None), "s");
        assert_eq!(decision.verdict, Verdict::Decline);
        assert_eq!(decision.decided_by, "00-ci.rhai: ci-declines-everything");
    }
}

#[test]
fn the_deploy_rule_accepts_only_in_its_project() {
    let (_dir, dirs) = only("20-deploy.rhai");
    let policy = Policy::load(&dirs).expect("loads");
    let request = form(json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}}));
    let proxied = |exe: &str, cwd: Option<&str>| Origin {
        verified_exe: Some(exe.to_owned()),
        ..origin("deployer", cwd)
    };
    let decision = policy.decide(
        &request,
        &proxied("/usr/local/bin/deployer", Some("/home/me/src/shop/web")),
        "s",
    );
    assert_eq!(decision.verdict, Verdict::Accept(json!({"confirm": true})));
    assert_eq!(decision.reason.as_deref(), Some("shop deploys are pre-approved"));
    for (exe, cwd) in [
        ("/usr/local/bin/deployer", Some("/home/me/src/shopping")),
        (
            "/usr/local/bin/deployer",
            Some("/home/me/src/shop/../../../../tmp"),
        ),
        ("/usr/local/bin/deployer", None),
        ("/tmp/calls-itself-deployer", Some("/home/me/src/shop")),
    ] {
        let decision = policy.decide(&request, &proxied(exe, cwd), "s");
        assert_eq!(decision.verdict, Verdict::Ask, "{exe} {cwd:?}");
    }
    // The name alone, as any server may give it, is not enough.
    let decision = policy.decide(&request, &origin("deployer", Some("/home/me/src/shop")), "s");
    assert_eq!(decision.verdict, Verdict::Ask);
}

#[test]
fn the_approved_servers_rule_declines_the_rest() {
    let (_dir, dirs) = only("10-approved.rhai");
    let policy = Policy::load(&dirs).expect("loads");
    let decision = policy.decide(&confirmation(), &origin("random", None), "s");
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(
        decision.reason.as_deref(),
        Some("random is not an approved server")
    );
    let decision = policy.decide(&confirmation(), &origin("github", None), "s");
    assert_eq!(decision.verdict, Verdict::Ask);
    let decision = policy.decide(
        &url_request("https://sso.example.com/login"),
        &origin("github", None),
        "s",
    );
    assert_eq!(decision.verdict, Verdict::Ask);
    let decision = policy.decide(
        &url_request("https://evil.example/login"),
        &origin("github", None),
        "s",
    );
    assert_eq!(decision.verdict, Verdict::Decline);
    assert_eq!(decision.decided_by, "10-approved.rhai: sso-only");
}
