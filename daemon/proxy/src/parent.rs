//! The host as its process shows it, for the origin of a host whose
//! `clientInfo` says nothing useful. The stdio proxy's parent is the host
//! that started it; where the host sends a library's default name (the
//! Python SDK's `mcp`, which langchain-mcp-adapters sends as `mcp 0.1.0`)
//! or a version nobody gave (Cline's `@cline/core 0.0.0`), the user is
//! better told `python3 agent.py`. [`PLACEHOLDERS`] is the one table of
//! what counts as saying nothing.

use std::path::Path;

use serde_json::Value;
use tokio::io::AsyncReadExt;

/// One rule of [`PLACEHOLDERS`]: a `clientInfo` whose name (and version,
/// where the rule gives one) match it, ignoring case and surrounding
/// blanks. `None` matches anything.
#[derive(Debug)]
pub struct Placeholder {
    /// The name the rule matches.
    pub name: Option<&'static str>,
    /// The version the rule matches.
    pub version: Option<&'static str>,
    /// Who sends it, for the reader.
    pub sent_by: &'static str,
}

const fn named(name: &'static str, sent_by: &'static str) -> Placeholder {
    Placeholder {
        name: Some(name),
        version: None,
        sent_by,
    }
}

/// `clientInfo`s that name a library or nothing, not the host using it.
/// A missing or blank name is one too ([`is_placeholder`]).
pub const PLACEHOLDERS: &[Placeholder] = &[
    named(
        "mcp",
        "the Python SDK's default (`mcp 0.1.0`), langchain-mcp-adapters",
    ),
    named("mcp-client", "the TypeScript SDK's examples"),
    named("client", "the TypeScript SDK's examples"),
    named("example-client", "the TypeScript and Go SDKs' examples"),
    named(
        "rmcp",
        "the Rust SDK's default (`Implementation::from_build_env`)",
    ),
    named("Java SDK MCP Client", "the Java SDK's default"),
    Placeholder {
        name: None,
        version: Some("0.0.0"),
        sent_by: "an unversioned build: Cline's `@cline/core 0.0.0`",
    },
];

/// Programs that run a script: the script names the host, not them.
const INTERPRETERS: &[&str] = &[
    "python", "node", "bun", "deno", "ruby", "perl", "uv", "uvx", "npx", "tsx",
];

/// The most of the parent's command line read (a name is short).
const MAX_CMDLINE: u64 = 64 * 1024;

/// The most characters of a name kept: an origin is one line on a form.
const MAX_NAME: usize = 80;

/// True when `info` (a `clientInfo`) is absent, nameless or matches a rule
/// of [`PLACEHOLDERS`].
pub fn is_placeholder(info: Option<&Value>) -> bool {
    let field = |name: &str| {
        info.and_then(|i| i.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let Some(name) = field("name") else {
        return true;
    };
    let version = field("version");
    let matches = |rule: Option<&str>, value: Option<&str>| {
        rule.is_none_or(|rule| value.is_some_and(|v| v.eq_ignore_ascii_case(rule)))
    };
    PLACEHOLDERS
        .iter()
        .any(|p| matches(p.name, Some(name)) && matches(p.version, version))
}

/// The parent process as a short name: the program's file name, and for an
/// interpreter the script's file name after it (`python3 agent.py`).
/// `None` when `/proc` does not say (the parent already gone, another
/// system).
pub async fn describe() -> Option<String> {
    let ppid = std::os::unix::process::parent_id();
    // The host's init (pid 1) is no host.
    if ppid <= 1 {
        return None;
    }
    let file = tokio::fs::File::open(format!("/proc/{ppid}/cmdline"))
        .await
        .ok()?;
    let mut raw = Vec::new();
    // Bounded: a command line can be megabytes of arguments.
    file.take(MAX_CMDLINE).read_to_end(&mut raw).await.ok()?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    name_of(&args)
}

/// [`describe`] from a command line. The result is safe to show: any
/// program may name itself anything, so control and format characters are
/// escaped and the name is cut to a line's length.
pub fn name_of(args: &[String]) -> Option<String> {
    program_named(args).map(|name| clean(&name))
}

fn program_named(args: &[String]) -> Option<String> {
    let program = file_name(args.first()?)?;
    let interpreter = INTERPRETERS.iter().any(|i| {
        program == *i
            || program
                .strip_prefix(i)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    });
    if interpreter
        && let Some(script) = args[1..].iter().find(|a| !a.starts_with('-'))
        && let Some(script) = file_name(script)
    {
        return Some(format!("{program} {script}"));
    }
    Some(program)
}

fn clean(name: &str) -> String {
    let escaped = elicit_proto::text::escape_controls(name);
    if escaped.chars().count() <= MAX_NAME {
        return escaped.into_owned();
    }
    let mut cut: String = escaped.chars().take(MAX_NAME - 1).collect();
    cut.push('…');
    cut
}

fn file_name(path: &str) -> Option<String> {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    /// Every `clientInfo` hosts were seen to send, and whether it says
    /// nothing about the host.
    const SEEN: &[(&str, &str, bool)] = &[
        ("mcp", "0.1.0", true),
        ("MCP ", "1.2", true),
        ("@cline/core", "0.0.0", true),
        ("@cline/core", " 0.0.0 ", true),
        ("", "1.0.0", true),
        ("   ", "", true),
        ("rmcp", "0.8.0", true),
        ("Java SDK MCP Client", "1.0.0", true),
        ("example-client", "1.0.0", true),
        ("claude-code", "2.1", false),
        ("mcp-inspector", "0.17", false),
        ("qwen-cli-mcp-client-everything", "0.0.1", false),
        ("continue-cli-client", "1.0.0", false),
        ("@cline/core", "3.0.65", false),
        ("opencode", "", false),
    ];

    #[test]
    fn library_defaults_unversioned_builds_and_missing_names_are_placeholders() {
        for (name, version, placeholder) in SEEN {
            let info = json!({"name": name, "version": version});
            assert_eq!(is_placeholder(Some(&info)), *placeholder, "{info}");
        }
        assert!(is_placeholder(Some(&json!({"version": "1"}))));
        assert!(is_placeholder(Some(&json!({"name": 5}))));
        assert!(is_placeholder(None));
    }

    #[test]
    fn every_rule_names_something() {
        for rule in PLACEHOLDERS {
            assert!(
                rule.name.is_some() || rule.version.is_some(),
                "{rule:?} would match every host"
            );
            assert!(!rule.sent_by.is_empty(), "{rule:?}");
        }
    }

    #[test]
    fn an_interpreter_is_named_with_its_script() {
        assert_eq!(
            name_of(&args("/usr/bin/python3 -u /home/a/agent.py --x")).as_deref(),
            Some("python3 agent.py")
        );
        assert_eq!(
            name_of(&args("python3.11 agent.py")).as_deref(),
            Some("python3.11 agent.py")
        );
        assert_eq!(
            name_of(&args("node /opt/app/dist/index.js")).as_deref(),
            Some("node index.js")
        );
        assert_eq!(
            name_of(&args("/usr/local/bin/claude -p hi")).as_deref(),
            Some("claude")
        );
        assert_eq!(
            name_of(&args("nodejs-helper x")).as_deref(),
            Some("nodejs-helper")
        );
        assert_eq!(name_of(&args("python3")).as_deref(), Some("python3"));
        assert_eq!(name_of(&[]), None);
        assert_eq!(name_of(&args("/")), None);
    }

    #[test]
    fn a_hostile_name_is_escaped_and_cut() {
        let name = name_of(&["/tmp/\u{1b}]0;owned\u{7}evil".to_owned()]);
        let name = name.unwrap_or_default();
        assert!(!name.contains('\u{1b}') && !name.contains('\u{7}'), "{name:?}");
        assert!(name.contains("\\u{1b}"), "the escape stays visible: {name:?}");
        let long = name_of(&["x".repeat(10_000)]).unwrap_or_default();
        assert_eq!(long.chars().count(), MAX_NAME);
        assert!(long.ends_with('…'));
        assert_eq!(
            name_of(&args("/usr/bin/\u{202e}python3 a.py")).map(|n| n.contains('\u{202e}')),
            Some(false)
        );
    }

    #[tokio::test]
    async fn this_process_parent_is_described() {
        // cargo's test runner starts the test binary: its parent is a real
        // process with a command line.
        let name = describe().await;
        assert!(name.as_deref().is_some_and(|n| !n.is_empty()), "{name:?}");
    }
}
