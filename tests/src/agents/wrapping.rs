//! `elicit wrap` on a config the agent's own CLI (or its documented file)
//! holds with the plain server: the real `elicit` binary runs as the
//! agent's user (the bench's `HOME` and `PATH`, in the project folder),
//! and the test checks what it did — the server is listed as wrapped by
//! `elicit hosts --json`, its command is the old one behind `elicit proxy
//! --`, and nothing else of the file changed (issue 40, item 1).

use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio::process::Command;

use super::hosts::Agent;
use crate::binary;

/// The server every bench configures.
const SERVER: &str = "everything";

/// `elicit wrap HOST` for `agent`, run by `setup` (a command with the
/// environment the agent gets), then checked; returns the file it edited.
pub async fn wrap_and_check(agent: Agent, setup: &dyn Fn(&str) -> Command) -> PathBuf {
    let host = host_id(agent);
    let before = listed(setup, host).await;
    let (path, plain) = server(&before, host);
    assert_eq!(
        plain["verdict"]["state"], "wrap",
        "{host}: before `elicit wrap`, {SERVER} is to be wrapped: {plain}"
    );
    let text_before = read(&path);
    let shown = elicit(setup, &["wrap", host]).await;
    assert!(
        shown.contains(&format!("wrapped {SERVER}")),
        "elicit wrap {host}: {shown}"
    );
    let after = listed(setup, host).await;
    let (after_path, wrapped) = server(&after, host);
    assert_eq!(after_path, path, "{host}: another file was edited");
    assert_eq!(
        wrapped["verdict"]["state"], "wrapped",
        "{host}: elicit hosts --json does not list {SERVER} as wrapped: {wrapped}"
    );
    let command = strings(&wrapped["command"]);
    let old = strings(&plain["command"]);
    assert!(
        command.len() == old.len() + 3
            && command[0].ends_with("elicit")
            && command[1..3] == ["proxy", "--"]
            && command[3..] == old[..],
        "{host}: {old:?} became {command:?}"
    );
    others_unchanged(&before, &after, host);
    only_the_entry_changed(&text_before, &read(&path), &plain["section"]["path"], host);
    eprintln!(
        "wrap-table | {} | {} | {} | {} | wrapped, only that entry changed",
        agent.name(),
        agent.version(),
        written_by(agent),
        path.display()
    );
    path
}

/// Who wrote the plain entry (chat_hosts.rs `configure`).
fn written_by(agent: Agent) -> &'static str {
    match agent {
        Agent::OpenCode => "opencode.json as its docs show it",
        Agent::Qwen => "qwen mcp add",
        Agent::Copilot => "copilot mcp add",
        Agent::Cline => "cline mcp add --yes",
        Agent::Continue => "~/.continue/config.yaml as its docs show it",
        _ => "its test",
    }
}

/// The name `elicit wrap` knows `agent` by.
fn host_id(agent: Agent) -> &'static str {
    match agent {
        Agent::OpenCode => "opencode",
        Agent::Qwen => "qwen",
        Agent::Copilot => "copilot",
        Agent::Cline => "cline",
        Agent::Continue => "continue",
        other => unreachable!("{} is wrapped by tests/tests/wrap_agents.rs", other.name()),
    }
}

/// Runs the real `elicit ARGS`; it must succeed. Returns what it printed.
async fn elicit(setup: &dyn Fn(&str) -> Command, args: &[&str]) -> String {
    let program = binary("elicit");
    let mut command = setup(&program.to_string_lossy());
    let output = tokio::time::timeout(super::AGENT_DEADLINE, command.args(args).output())
        .await
        .unwrap_or_else(|_| panic!("elicit {args:?} did not end"))
        .unwrap_or_else(|e| panic!("elicit does not start: {e}"));
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "elicit {args:?}: {}\n{shown}",
        output.status
    );
    shown
}

/// `elicit hosts --json`'s files of `host`.
async fn listed(setup: &dyn Fn(&str) -> Command, host: &str) -> Vec<Value> {
    let text = elicit(setup, &["hosts", "--json"]).await;
    let value: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("elicit hosts --json ({e}):\n{text}"));
    value["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|file| file["host"] == host)
        .cloned()
        .collect()
}

/// The one file of `files` that holds the server, and its entry there.
fn server(files: &[Value], host: &str) -> (PathBuf, Value) {
    let mut found = files.iter().flat_map(|file| {
        file["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["name"] == SERVER)
            .map(move |s| {
                (
                    PathBuf::from(file["path"].as_str().unwrap_or_default()),
                    s.clone(),
                )
            })
    });
    let one = found
        .next()
        .unwrap_or_else(|| panic!("elicit hosts lists no {SERVER} of {host}: {files:?}"));
    assert!(found.next().is_none(), "{host}: {SERVER} listed twice: {files:?}");
    one
}

/// Every other server `hosts` lists for the host is as it was.
fn others_unchanged(before: &[Value], after: &[Value], host: &str) {
    let others = |files: &[Value]| -> Vec<Value> {
        files
            .iter()
            .flat_map(|file| file["servers"].as_array().cloned().unwrap_or_default())
            .filter(|s| s["name"] != SERVER)
            .map(|mut s| {
                s["action"] = Value::Null; // what this run did, not what the file says
                s
            })
            .collect()
    };
    assert_eq!(others(before), others(after), "{host}: other servers changed");
}

/// The file's text, apart from the server's entry, is as it was; in the
/// entry, only the command (and its `args`) changed.
fn only_the_entry_changed(before: &str, after: &str, section: &Value, host: &str) {
    assert_ne!(before, after, "{host}: the file did not change");
    let Ok(mut old) = serde_json::from_str::<Value>(before) else {
        // YAML (Continue): the entry is the file's last block, so every
        // line before its `name:` line must be as it was.
        let start = before
            .find(&format!("- name: {SERVER}"))
            .unwrap_or_else(|| panic!("{host}: no {SERVER} item in\n{before}"));
        assert_eq!(
            after.get(..start),
            Some(&before[..start]),
            "{host}: wrap changed more than the entry:\n{after}"
        );
        return;
    };
    let mut new: Value =
        serde_json::from_str(after).unwrap_or_else(|e| panic!("{host}: wrap wrote bad JSON ({e}):\n{after}"));
    let keys: Vec<&str> = section
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .chain([SERVER])
        .collect();
    for value in [&mut old, &mut new] {
        let entry = keys
            .iter()
            .try_fold(&mut *value, |v, key| v.get_mut(*key))
            .unwrap_or_else(|| panic!("{host}: no entry at {keys:?}"));
        strip_command(entry);
        if let Some(transport) = entry.get_mut("transport") {
            strip_command(transport); // Cline's shape
        }
    }
    assert_eq!(
        old, new,
        "{host}: wrap changed more than the entry's command:\n{before}\n---\n{after}"
    );
}

fn strip_command(entry: &mut Value) {
    if let Some(object) = entry.as_object_mut() {
        object.remove("command");
        object.remove("args");
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}
