//! The host as its process shows it, for the origin of a host whose
//! `clientInfo` says nothing useful. The stdio proxy's parent is the host
//! that started it; where the host sends a library's default name (the
//! Python SDK's `mcp`, which langchain-mcp-adapters sends as `mcp 0.1.0`),
//! the user is better told `python3 agent.py`.

use std::path::Path;

use serde_json::Value;
use tokio::io::AsyncReadExt;

/// `clientInfo` names that name a library, not the host using it.
const PLACEHOLDERS: &[&str] = &["mcp", "mcp-client", "client", "example-client"];

/// Programs that run a script: the script names the host, not them.
const INTERPRETERS: &[&str] = &[
    "python", "node", "bun", "deno", "ruby", "perl", "uv", "uvx", "npx", "tsx",
];

/// The most of the parent's command line read (a name is short).
const MAX_CMDLINE: u64 = 64 * 1024;

/// The most characters of a name kept: an origin is one line on a form.
const MAX_NAME: usize = 80;

/// True when `info` (a `clientInfo`) is absent, nameless or a known
/// library default.
pub fn is_placeholder(info: Option<&Value>) -> bool {
    match info.and_then(|i| i.get("name")).and_then(Value::as_str) {
        None => true,
        Some(name) => {
            let name = name.trim();
            name.is_empty() || PLACEHOLDERS.contains(&name.to_ascii_lowercase().as_str())
        }
    }
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
    named(args).map(|name| clean(&name))
}

fn named(args: &[String]) -> Option<String> {
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

    #[test]
    fn library_defaults_and_missing_names_are_placeholders() {
        assert!(is_placeholder(Some(&json!({"name": "mcp", "version": "0.1.0"}))));
        assert!(is_placeholder(Some(&json!({"name": " "}))));
        assert!(is_placeholder(Some(&json!({"version": "1"}))));
        assert!(is_placeholder(None));
        assert!(!is_placeholder(Some(
            &json!({"name": "claude-code", "version": "2.1"})
        )));
        assert!(!is_placeholder(Some(&json!({"name": "mcp-inspector"}))));
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
