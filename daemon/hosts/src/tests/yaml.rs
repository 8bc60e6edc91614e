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

#[test]
fn every_yaml_fixture_round_trips() {
    for case in CASES {
        round_trip(case);
    }
}

#[test]
fn wrapping_and_unwrapping_server_by_server_still_gives_back_every_byte() {
    for case in CASES {
        server_by_server(case);
    }
}

#[test]
fn a_dry_run_writes_nothing() {
    for case in CASES {
        dry_run(case);
    }
}

#[test]
fn only_the_entries_come_back_when_the_host_edited_the_file() {
    for case in CASES {
        host_edits_between(case, host_edit);
    }
}

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
