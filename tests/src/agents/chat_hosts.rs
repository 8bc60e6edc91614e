//! The five CLIs that take any OpenAI-compatible model (issue 40):
//! opencode, Qwen Code, GitHub Copilot CLI, Cline and Continue, each set up
//! as its users set it up — with its own `mcp add` command where it has a
//! non-interactive one (Qwen Code, Copilot CLI, Cline), else its config
//! file as its documentation shows it (opencode's `opencode.json`, whose
//! `opencode mcp add` is an interactive wizard; Continue's
//! `~/.continue/config.yaml`, which has no such command) — and pointed at
//! the fake model's Chat Completions (tests/peers/python/fake_model.py
//! `chat`).
//!
//! The server entry is written from [`wrapped_argv`], the documented
//! stdio entry (`elicit proxy -- npx -y @modelcontextprotocol/server-everything`):
//! the agent's own command writes it as it would write any server. Or,
//! [`Entry::Plain`], from [`unwrapped_argv`], the server as a user adds it
//! before wrapping: then `elicit wrap` edits the file the agent wrote
//! (wrapping.rs) before the agent runs (tests/tests/wrap_agents.rs).

use std::path::Path;

use serde_json::{Value, json};
use tokio::process::Command;

use super::hosts::{Agent, Ask, Server};
use super::snippets::everything_entry;

/// The one prompt every CLI gets; the fake model decides what happens.
const PROMPT: &str = "Call the MCP tool.";

/// The model name every CLI is told to use (the fake answers any name).
const MODEL: &str = "fake";

/// Which command line the agent's config gets for the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// The documented entry, already behind `elicit proxy`: [`wrapped_argv`].
    Documented,
    /// The plain server, for `elicit wrap` to wrap: [`unwrapped_argv`].
    Plain,
}

/// The documented stdio entry as one command line: `elicit proxy -- npx
/// -y @modelcontextprotocol/server-everything`, read from the docs'
/// `mcpServers` snippet.
pub fn wrapped_argv() -> Vec<String> {
    let entry = everything_entry();
    let mut argv = vec![entry["command"].as_str().unwrap_or("elicit").to_owned()];
    argv.extend(
        entry["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned)),
    );
    argv
}

/// The server's own command line, as a user has it before wrapping: what
/// follows `--` in [`wrapped_argv`].
pub fn unwrapped_argv() -> Vec<String> {
    let argv = wrapped_argv();
    match argv.iter().position(|a| a == "--") {
        Some(at) => argv[at + 1..].to_vec(),
        None => argv,
    }
}

/// Writes `agent`'s model and `server` into its configuration under `home`
/// (the fake model at `model`), running its own `mcp add` where it has one;
/// `setup(program)` is a command with the environment the host itself gets.
/// A stdio server gets the command line `entry` says.
#[allow(clippy::too_many_arguments)] // one call site, Bench's
pub async fn configure(
    agent: Agent,
    setup: &dyn Fn(&str) -> Command,
    home: &Path,
    work: &Path,
    server: &Server,
    ask: &Ask,
    model: &str,
    entry: Entry,
) {
    let argv = match entry {
        Entry::Documented => wrapped_argv(),
        Entry::Plain => unwrapped_argv(),
    };
    let timeout_ms = ask.timeout_secs.map(|s| s * 1000);
    match agent {
        Agent::OpenCode => {
            let mut entry = match server {
                Server::Stdio => json!({"type": "local", "command": argv}),
                Server::Http(url) => json!({"type": "remote", "url": url}),
            };
            if let Some(ms) = timeout_ms {
                // opencode's per-server `timeout` bounds each tool call.
                entry["timeout"] = json!(ms);
            }
            let config = json!({
                "$schema": "https://opencode.ai/config.json",
                "provider": {"fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": format!("{model}/v1"), "apiKey": "dummy"},
                    "models": {MODEL: {"name": MODEL}},
                }},
                "model": format!("fake/{MODEL}"),
                "autoupdate": false,
                "share": "disabled",
                "mcp": {"everything": entry},
            });
            write(&work.join("opencode.json"), &pretty(&config));
        }
        Agent::Qwen => {
            let mut add = setup("qwen");
            add.args(["mcp", "add"]);
            if let Some(ms) = timeout_ms {
                add.args(["--timeout", &ms.to_string()]);
            }
            match server {
                // yargs takes the first `--` for itself: the one after the
                // command is the one the entry keeps.
                Server::Stdio => add.arg("everything").arg(&argv[0]).arg("--").args(&argv[1..]),
                Server::Http(url) => add.args(["--transport", "http", "everything", url]),
            };
            run_setup(add, "qwen mcp add").await;
        }
        Agent::Copilot => {
            let mut add = setup("copilot");
            add.args(["mcp", "add"]);
            if let Some(ms) = timeout_ms {
                add.args(["--timeout", &ms.to_string()]);
            }
            match server {
                Server::Stdio => add.arg("everything").arg("--").args(&argv),
                Server::Http(url) => add.args(["--transport", "http", "everything", url]),
            };
            run_setup(add, "copilot mcp add").await;
        }
        Agent::Cline => {
            let mut auth = setup("cline");
            auth.args(["auth", "-p", "openai", "-k", "dummy", "-m", MODEL, "-b"])
                .arg(format!("{model}/v1"));
            run_setup(auth, "cline auth").await;
            let mut add = setup("cline");
            add.args(["mcp", "add", "--yes"]);
            match server {
                Server::Stdio => add.arg("everything").arg("--").args(&argv),
                Server::Http(url) => add.args(["--transport", "streamable-http", "everything", url]),
            };
            run_setup(add, "cline mcp add --yes").await;
            if let Some(secs) = ask.timeout_secs {
                // No flag of `cline mcp add` sets it: the entry's
                // `timeout` (seconds), as Cline's settings file has it.
                let file = home.join(".cline/data/settings/cline_mcp_settings.json");
                edit_json(&file, |v| v["mcpServers"]["everything"]["timeout"] = json!(secs));
            }
        }
        Agent::Continue => {
            let entry = match server {
                Server::Stdio => format!(
                    "  - name: everything\n    command: {}\n    args: [{}]\n",
                    quoted(&argv[0]),
                    argv[1..].iter().map(|a| quoted(a)).collect::<Vec<_>>().join(", ")
                ),
                Server::Http(url) => format!(
                    "  - name: everything\n    type: streamable-http\n    url: {}\n",
                    quoted(url)
                ),
            };
            let yaml = format!(
                "name: elicitd test\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: {MODEL}\n    provider: openai\n    \
                 model: {MODEL}\n    apiBase: {}\n    apiKey: dummy\n    roles: [chat]\nmcpServers:\n{entry}",
                quoted(&format!("{model}/v1"))
            );
            write(&home.join(".continue/config.yaml"), &yaml);
        }
        Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Sdk | Agent::Pydantic => {
            unreachable!("{} is configured by hosts.rs", agent.name())
        }
    }
}

/// The command that runs `agent` headless on [`PROMPT`], with the
/// environment that keeps it on the fake model at `model` and off the
/// network (no updates, telemetry or sign-in).
pub fn command(agent: Agent, home: &Path, model: &str) -> Command {
    let v1 = format!("{model}/v1");
    match agent {
        Agent::OpenCode => {
            let mut command = Command::new("opencode");
            command
                .args(["run", PROMPT])
                .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
                .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
                .env("OPENCODE_DISABLE_SHARE", "1");
            command
        }
        Agent::Qwen => {
            let mut command = Command::new("qwen");
            command
                .args(["-p", PROMPT, "--approval-mode", "yolo"])
                .env("OPENAI_BASE_URL", &v1)
                .env("OPENAI_API_KEY", "dummy")
                .env("OPENAI_MODEL", MODEL);
            command
        }
        Agent::Copilot => {
            let mut command = Command::new("copilot");
            command
                .args(["-p", PROMPT, "--allow-all-tools"])
                .env("COPILOT_OFFLINE", "true")
                .env("COPILOT_PROVIDER_BASE_URL", &v1)
                .env("COPILOT_MODEL", MODEL)
                .env("COPILOT_AUTO_UPDATE", "false");
            command
        }
        Agent::Cline => {
            let mut command = Command::new("cline");
            command.arg(PROMPT);
            command
        }
        Agent::Continue => {
            let mut command = Command::new("cn");
            command
                .args(["-p", PROMPT, "--auto", "--config"])
                .arg(home.join(".continue/config.yaml"))
                .env("CONTINUE_TELEMETRY_ENABLED", "0");
            command
        }
        Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Sdk | Agent::Pydantic => {
            unreachable!("{} is run by hosts.rs", agent.name())
        }
    }
}

/// Runs one setup command to its end; it must succeed.
async fn run_setup(mut command: Command, what: &str) {
    let output = tokio::time::timeout(super::AGENT_DEADLINE, command.output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not end"))
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A YAML double-quoted scalar: JSON's string syntax is YAML's.
fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn edit_json(path: &Path, change: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut value: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    change(&mut value);
    write(path, &pretty(&value));
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("config folder");
    }
    std::fs::write(path, text).expect("write the host's config");
}
