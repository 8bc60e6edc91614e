//! JSON and JSONC: Claude Code (user, local and project scopes), Gemini
//! CLI, Qwen Code, VS Code, Cursor, Windsurf, Zed (both command shapes),
//! opencode, Copilot CLI, Cline CLI, Claude Desktop.

use super::*;

const CASES: &[Case] = &[
    Case {
        host: Host::Claude,
        fixture: "home/.claude.json",
        scope: Scope::User,
        wrapped: &["airtable", "sentry", "stripe", "local-tool"],
        left: &["linear"],
    },
    Case {
        host: Host::Claude,
        fixture: "project/.mcp.json",
        scope: Scope::Project,
        wrapped: &["shared-server"],
        left: &["api-server"],
    },
    Case {
        host: Host::Gemini,
        fixture: "home/.gemini/settings.json",
        scope: Scope::User,
        wrapped: &["pythonTools", "httpServer"],
        left: &["sseServer"],
    },
    Case {
        host: Host::Gemini,
        fixture: "project/.gemini/settings.json",
        scope: Scope::Project,
        wrapped: &["dockerizedServer"],
        left: &[],
    },
    Case {
        host: Host::Qwen,
        fixture: "home/.qwen/settings.json",
        scope: Scope::User,
        wrapped: &["myNodeServer"],
        left: &[],
    },
    Case {
        host: Host::VsCode,
        fixture: "home/.config/Code/User/mcp.json",
        scope: Scope::User,
        wrapped: &["Perplexity", "docs"],
        left: &["github"],
    },
    Case {
        host: Host::VsCode,
        fixture: "project/.vscode/mcp.json",
        scope: Scope::Project,
        wrapped: &["fetch"],
        left: &[],
    },
    Case {
        host: Host::Cursor,
        fixture: "home/.cursor/mcp.json",
        scope: Scope::User,
        wrapped: &["server-name"],
        left: &["remote-server"],
    },
    Case {
        host: Host::Windsurf,
        fixture: "home/.codeium/windsurf/mcp_config.json",
        scope: Scope::User,
        wrapped: &["github", "figma"],
        left: &[],
    },
    Case {
        host: Host::Zed,
        fixture: "home/.config/zed/settings.json",
        scope: Scope::User,
        wrapped: &["local-mcp-server", "old-shape"],
        left: &["remote-mcp-server", "mcp-server-github"],
    },
    Case {
        host: Host::Zed,
        fixture: "project/.zed/settings.json",
        scope: Scope::Project,
        wrapped: &["project-server"],
        left: &[],
    },
    Case {
        host: Host::Opencode,
        fixture: "home/.config/opencode/opencode.jsonc",
        scope: Scope::User,
        wrapped: &["my-local-mcp-server"],
        left: &["my-remote-mcp"],
    },
    Case {
        host: Host::Opencode,
        fixture: "project/opencode.json",
        scope: Scope::Project,
        wrapped: &["mcp_everything"],
        left: &[],
    },
    Case {
        host: Host::Copilot,
        fixture: "home/.copilot/mcp-config.json",
        scope: Scope::User,
        wrapped: &["playwright"],
        left: &["context7"],
    },
    Case {
        host: Host::Cline,
        fixture: "home/.cline/data/settings/cline_mcp_settings.json",
        scope: Scope::User,
        wrapped: &["everything", "local-server"],
        left: &["remote"],
    },
    Case {
        host: Host::ClaudeDesktop,
        fixture: "home/.config/Claude/claude_desktop_config.json",
        scope: Scope::User,
        wrapped: &["filesystem"],
        left: &[],
    },
];

/// The host adds a key at the top of the file.
fn host_edit(text: &str) -> String {
    let at = text.find('{').expect("an object") + 1;
    format!("{}\n  \"hostEdit\": 1,{}", &text[..at], &text[at..])
}

every_fixture_checks!(CASES, host_edit);

#[test]
fn a_malformed_json_file_is_left_as_it_is() {
    malformed(Host::Gemini, "malformed/settings.json");
}

#[test]
fn a_stdio_entry_changes_only_its_command_and_args() {
    let (bench, _) = bench(&CASES[0]);
    bench.wrap();
    let text = bench.text();
    assert!(
        text.contains(
            "\"command\": \"elicit\",\n      \"args\": [\n        \"proxy\",\n        \"--\",\n        \"npx\",\n        \"-y\","
        ),
        "{text}"
    );
    // The empty list of the local scope gets the three on one line.
    assert!(
        text.contains("\"args\": [\"proxy\", \"--\", \"/opt/tools/mcp-server\"]"),
        "{text}"
    );
    // A remote entry: the URL becomes the proxy's, its type stdio.
    assert!(text.contains("\"type\": \"stdio\",\n      \"command\": \"elicit\",\n      \"args\": [\"proxy\", \"--url\", \"https://mcp.sentry.dev/mcp\"]"), "{text}");
}

#[test]
fn entries_come_back_after_claude_code_rewrote_the_whole_file() {
    // Claude Code writes ~/.claude.json with JSON.stringify(…, null, 2):
    // serde_json's pretty printer lays it out the same way.
    let (bench, original) = bench(&CASES[0]);
    bench.wrap();
    let rewrite = |text: &str| {
        let mut value: serde_json::Value = serde_json::from_str(text).expect("json");
        value["numStartups"] = 13.into();
        serde_json::to_string_pretty(&value).expect("json") + "\n"
    };
    bench.set(&rewrite(&bench.text()));
    let report = bench.unwrap();
    assert_eq!(report.error, None);
    let restored: serde_json::Value = serde_json::from_str(&bench.text()).expect("json");
    let expected: serde_json::Value = serde_json::from_str(&rewrite(&original)).expect("json");
    assert_eq!(restored, expected);
}

#[test]
fn only_the_named_servers_are_wrapped() {
    let (bench, _) = bench(&CASES[0]);
    let mut options = options();
    options.servers = vec!["stripe".to_owned()];
    let report = wrap(&bench.store, &bench.file, &options);
    assert_eq!(names(&report, Action::Wrapped), vec!["stripe".to_owned()]);
    let _ = fixture_path("home/.claude.json");
}

#[test]
fn a_crlf_file_keeps_its_line_breaks() {
    let original = fixture("home/.claude.json").replace('\n', "\r\n");
    let bench = Bench::new(Host::Claude, Scope::User, ".claude.json", &original);
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

#[test]
fn a_server_removed_by_the_user_leaves_no_backup_behind() {
    let (bench, _) = bench(&CASES[1]);
    assert_eq!(bench.wrap().error, None);
    // The user deletes the wrapped server by hand.
    let text = bench.text();
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["mcpServers"]
        .as_object_mut()
        .expect("servers")
        .remove("shared-server");
    bench.set(&serde_json::to_string_pretty(&value).expect("json"));
    let report = bench.unwrap();
    assert_eq!(report.error, None);
    assert_eq!(bench.store.load(&bench.file.path).expect("load"), None);
}

/// `cline mcp add` nests the command in a `transport` object: that is
/// where `elicit proxy --` goes, and nothing else of the entry moves.
#[test]
fn clines_transport_object_gets_the_proxy() {
    let fixture_name = "home/.cline/data/settings/cline_mcp_settings.json";
    let original = fixture(fixture_name);
    let bench = Bench::new(Host::Cline, Scope::User, "cline_mcp_settings.json", &original);
    assert_eq!(bench.wrap().error, None);
    let wrapped = bench.text();
    let before =
        "\"type\": \"stdio\",\n        \"command\": \"npx\",\n        \"args\": [\n          \"-y\",";
    let after = "\"type\": \"stdio\",\n        \"command\": \"elicit\",\n        \"args\": [\n          \"proxy\",\n          \"--\",\n          \"npx\",\n          \"-y\",";
    assert!(original.contains(before), "{original}");
    assert_eq!(
        wrapped,
        original.replacen(before, after, 1).replacen(
            "\"command\": \"node\",\n      \"args\": [\"/path/to/server.js\"]",
            "\"command\": \"elicit\",\n      \"args\": [\"proxy\", \"--\", \"node\", \"/path/to/server.js\"]",
            1,
        )
    );
    let remote = survey(&bench.file)
        .servers
        .into_iter()
        .find(|s| s.name == "remote")
        .expect("the remote entry");
    let Verdict::Leave { reason } = remote.verdict else {
        panic!("{:?}", remote.verdict)
    };
    assert!(reason.contains("not wrapped"), "{reason}");
}
