//! YAML: Goose's extensions and Continue's list.

use super::*;

const CASES: &[Case] = &[
    Case {
        host: Host::Goose,
        fixture: "home/.config/goose/config.yaml",
        scope: Scope::User,
        wrapped: &["github", "fetch"],
        left: &["developer"],
    },
    Case {
        host: Host::Continue,
        fixture: "home/.continue/config.yaml",
        scope: Scope::User,
        wrapped: &["SQLite MCP", "Browser", "Plain"],
        left: &[],
    },
];

fn host_edit(text: &str) -> String {
    format!("host_edit: 1\n{text}")
}

every_fixture_checks!(CASES, host_edit);

#[test]
fn a_malformed_yaml_file_is_left_as_it_is() {
    malformed(Host::Goose, "malformed/config.yaml");
}

#[test]
fn block_lists_get_lines_as_their_items_are() {
    let (bench, _) = bench(&CASES[1]);
    bench.wrap();
    let text = bench.text();
    assert!(
        text.contains(
            "    command: elicit\n    args:\n      - proxy\n      - \"--\"\n      - npx\n      - \"-y\""
        ),
        "{text}"
    );
    assert!(
        text.contains("args: [proxy, \"--\", npx, \"@playwright/mcp@latest\"]"),
        "{text}"
    );
    assert!(
        text.contains("    command: elicit\n    args: [proxy, \"--\", my-mcp]\n"),
        "{text}"
    );
}

#[test]
fn a_crlf_file_keeps_its_line_breaks() {
    let original = fixture("home/.continue/config.yaml").replace('\n', "\r\n");
    let bench = Bench::new(Host::Continue, Scope::User, "config.yaml", &original);
    assert_eq!(bench.wrap().error, None);
    let wrapped = bench.text();
    assert_eq!(
        wrapped.matches('\n').count(),
        wrapped.matches("\r\n").count(),
        "{wrapped:?}"
    );
    assert_eq!(bench.unwrap().error, None);
    assert_eq!(bench.text(), original);
}
