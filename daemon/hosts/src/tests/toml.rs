//! TOML: Codex, user and project files.

use super::*;

const CASES: &[Case] = &[
    Case {
        host: Host::Codex,
        fixture: "home/.codex/config.toml",
        scope: Scope::User,
        wrapped: &["docs", "git", "plain"],
        left: &["figma"],
    },
    Case {
        host: Host::Codex,
        fixture: "project/.codex/config.toml",
        scope: Scope::Project,
        wrapped: &["project-tool"],
        left: &[],
    },
];

fn host_edit(text: &str) -> String {
    format!("host_edit = 1\n{text}")
}

every_fixture_checks!(CASES, host_edit);

#[test]
fn a_malformed_toml_file_is_left_as_it_is() {
    malformed(Host::Codex, "malformed/config.toml");
}

#[test]
fn lists_keep_their_layout_and_comments() {
    let (bench, _) = bench(&CASES[0]);
    bench.wrap();
    let text = bench.text();
    assert!(
        text.contains("command = \"elicit\"   # the server's program"),
        "{text}"
    );
    assert!(
        text.contains("args = [\"proxy\", \"--\", \"docs-server\", \"--port\", \"4000\"]"),
        "{text}"
    );
    assert!(
        text.contains("args = [\n  \"proxy\",\n  \"--\",\n  \"uvx\",\n  \"mcp-server-git\",  # a comment inside the list"),
        "{text}"
    );
}
