//! Each host as its users run it: its configuration file (from the
//! documentation's snippet), its command line, and the environment that
//! keeps it on loopback (no telemetry, no updates, no plugins).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tokio::process::Command;

use super::snippets::{codex_toml, everything_entry};
use crate::mcp::peers;

/// The hosts tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// `claude -p` (`@anthropic-ai/claude-code`).
    Claude,
    /// `codex exec` (`@openai/codex`).
    Codex,
    /// `gemini -p` (`@google/gemini-cli`).
    Gemini,
    /// The TypeScript SDK's `Client` (`@modelcontextprotocol/sdk`),
    /// tests/peers/node/sdk_host.mjs.
    Sdk,
    /// pydantic-ai's `MCPToolset` with a `FunctionModel`,
    /// tests/peers/python/pydantic_host.py.
    Pydantic,
    /// `opencode run` (`opencode-ai`).
    OpenCode,
    /// `qwen -p` (`@qwen-code/qwen-code`).
    Qwen,
    /// `copilot -p` (`@github/copilot`), on its own model (`COPILOT_OFFLINE`).
    Copilot,
    /// `cline PROMPT` (`cline`), whose MCP servers run in its hub.
    Cline,
    /// `cn -p` (`@continuedev/cli`).
    Continue,
}

/// Where the host finds the server.
#[derive(Debug, Clone)]
pub enum Server {
    /// The documented stdio entry: `elicit proxy -- npx -y
    /// @modelcontextprotocol/server-everything`.
    Stdio,
    /// `{"type": "http", "url": URL}`: `elicit serve` at URL.
    Http(String),
}

/// What one run asks of the host.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The tool the model (or the script) calls; `None`: no call at all.
    pub tool: Option<&'static str>,
    /// The host's own timeout for the call, in seconds (Codex's
    /// `tool_timeout_sec`, the SDK's request timeout).
    pub timeout_secs: Option<u64>,
}

/// The one prompt every CLI gets; the fake model decides what happens.
const PROMPT: &str = "Call the MCP tool.";

impl Agent {
    /// The host's name in messages and the closing table.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini-cli",
            Agent::Sdk => "typescript-sdk",
            Agent::Pydantic => "pydantic-ai",
            Agent::OpenCode => "opencode",
            Agent::Qwen => "qwen-code",
            Agent::Copilot => "copilot-cli",
            Agent::Cline => "cline",
            Agent::Continue => "continue-cli",
        }
    }

    /// The host the user is shown for this host's stdio server, where the
    /// test knows it: pydantic-ai sends the Python SDK's placeholder
    /// `clientInfo` (`mcp 0.1.0`), which the proxy replaces with its parent
    /// process; the TypeScript SDK host names itself.
    pub fn origin(self) -> Option<&'static str> {
        match self {
            Agent::Pydantic => Some("python3 pydantic_host.py"),
            Agent::Sdk => Some("sdk-host"),
            _ => None,
        }
    }

    /// The API the fake model speaks to this host, if it needs one.
    pub fn dialect(self) -> Option<&'static str> {
        match self {
            Agent::Claude => Some("anthropic"),
            Agent::Codex => Some("openai"),
            Agent::Gemini => Some("gemini"),
            Agent::OpenCode | Agent::Qwen | Agent::Copilot | Agent::Cline | Agent::Continue => Some("chat"),
            Agent::Sdk | Agent::Pydantic => None,
        }
    }

    /// True for the CLIs of chat_hosts.rs, which take any OpenAI-compatible
    /// model and are set up by their own commands.
    pub fn is_chat(self) -> bool {
        matches!(
            self,
            Agent::OpenCode | Agent::Qwen | Agent::Copilot | Agent::Cline | Agent::Continue
        )
    }

    /// True when the host, asked to stop (SIGINT), stops its stdio servers
    /// itself (a signal, as Claude Code and Codex do). The others (opencode,
    /// Continue; Qwen Code, which first cancels its call) just exit and
    /// close the proxy's input, as if killed: the server then has the
    /// proxy's exit grace before SIGTERM.
    pub fn stops_servers(self) -> bool {
        !matches!(self, Agent::OpenCode | Agent::Qwen | Agent::Continue)
    }

    /// True when the host, at the end of a run, ends its stdio servers
    /// before it exits. Qwen Code does not always: its servers then see
    /// only their input close, and go at the proxy's exit grace (5 s).
    pub fn ends_servers_on_exit(self) -> bool {
        !matches!(self, Agent::Qwen)
    }

    /// How the host gives up on a call, as the form's withdrawal reason:
    /// `cancelled` where it sends `notifications/cancelled`; Cline instead
    /// drops its connection to the server (`client-gone`).
    pub fn gives_up_as(self) -> &'static str {
        match self {
            Agent::Cline => "client-gone",
            _ => "cancelled",
        }
    }

    /// The host's own limit on a call, in seconds, where no setting changes
    /// it: Continue's SDK default (60 s; it sends no progress token that
    /// would extend it).
    pub fn fixed_call_limit(self) -> Option<u64> {
        match self {
            Agent::Continue => Some(60),
            _ => None,
        }
    }

    /// How long the host's processes may take to go after Ctrl-C to its
    /// group, where that is longer than a killed host's: Qwen Code's
    /// relaunched child survives its launcher, starts its MCP servers
    /// again, and exits only tens of seconds later (seen: about 30 s).
    pub fn ctrl_c_lingers(self) -> Option<std::time::Duration> {
        match self {
            Agent::Qwen => Some(std::time::Duration::from_secs(60)),
            _ => None,
        }
    }

    /// The per-call timeout the host-cancel case sets, in seconds. Cline's
    /// `timeout` also bounds its connection attempt, which `npx` starting
    /// the server on a loaded machine can take seconds of.
    pub fn cancel_after_secs(self) -> u64 {
        match self {
            Agent::Cline => 15,
            _ => 3,
        }
    }

    /// What marks the host's hub in a command line: a process that runs
    /// the host's MCP servers for every session and outlives the CLI
    /// (Cline's `cline --cline-hub-daemon`, started detached in its own
    /// session).
    pub fn hub(self) -> Option<&'static str> {
        match self {
            Agent::Cline => Some("--cline-hub-daemon"),
            _ => None,
        }
    }

    /// The file that proves the host is installed, and its package.
    pub fn installed(self) -> (PathBuf, &'static str) {
        let node = peers().join("node/node_modules");
        match self {
            Agent::OpenCode => (node.join(".bin/opencode"), "opencode-ai (npm)"),
            Agent::Qwen => (node.join(".bin/qwen"), "@qwen-code/qwen-code (npm)"),
            Agent::Copilot => (node.join(".bin/copilot"), "@github/copilot (npm)"),
            Agent::Cline => (node.join(".bin/cline"), "cline (npm)"),
            Agent::Continue => (node.join(".bin/cn"), "@continuedev/cli (npm)"),
            Agent::Claude => (node.join(".bin/claude"), "@anthropic-ai/claude-code (npm)"),
            Agent::Codex => (node.join(".bin/codex"), "@openai/codex (npm)"),
            Agent::Gemini => (node.join(".bin/gemini"), "@google/gemini-cli (npm)"),
            Agent::Sdk => (
                node.join("@modelcontextprotocol/sdk/package.json"),
                "@modelcontextprotocol/sdk (npm)",
            ),
            Agent::Pydantic => (peers().join("python/site/pydantic_ai"), "pydantic-ai (PyPI)"),
        }
    }

    /// The pinned version, read from the installed package.
    pub fn version(self) -> String {
        let node = peers().join("node/node_modules");
        let manifest = match self {
            Agent::Claude => node.join("@anthropic-ai/claude-code/package.json"),
            Agent::Codex => node.join("@openai/codex/package.json"),
            Agent::Gemini => node.join("@google/gemini-cli/package.json"),
            Agent::Sdk => node.join("@modelcontextprotocol/sdk/package.json"),
            Agent::OpenCode => node.join("opencode-ai/package.json"),
            Agent::Qwen => node.join("@qwen-code/qwen-code/package.json"),
            Agent::Copilot => node.join("@github/copilot/package.json"),
            Agent::Cline => node.join("cline/package.json"),
            Agent::Continue => node.join("@continuedev/cli/package.json"),
            Agent::Pydantic => {
                return std::fs::read_to_string(peers().join("python/requirements.txt"))
                    .unwrap_or_default()
                    .lines()
                    .find_map(|l| l.strip_prefix("pydantic-ai-slim[mcp]=="))
                    .unwrap_or("?")
                    .to_owned();
            }
        };
        std::fs::read_to_string(manifest)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "?".into())
    }

    /// Writes the host's configuration under `home` and returns its
    /// command, to run in `work` with `model` the fake's base URL. The
    /// CLIs of chat_hosts.rs are configured before, by
    /// [`super::chat_hosts::configure`].
    pub fn command(
        self,
        home: &Path,
        work: &Path,
        server: &Server,
        ask: &Ask,
        model: Option<&str>,
    ) -> Command {
        let entry = match server {
            Server::Stdio => everything_entry(),
            Server::Http(url) => json!({"type": "http", "url": url}),
        };
        let model = model.unwrap_or_default();
        let mut command = match self {
            Agent::OpenCode | Agent::Qwen | Agent::Copilot | Agent::Cline | Agent::Continue => {
                super::chat_hosts::command(self, home, model)
            }
            Agent::Claude => {
                let config = home.join("mcp.json");
                write(&config, &json!({"mcpServers": {"everything": entry}}).to_string());
                let mut command = Command::new("claude");
                command
                    .args(["-p", PROMPT, "--mcp-config"])
                    .arg(&config)
                    .args([
                        "--strict-mcp-config",
                        "--allowedTools",
                        "mcp__everything__trigger-elicitation-request",
                    ])
                    .env("ANTHROPIC_BASE_URL", model)
                    .env("ANTHROPIC_API_KEY", "dummy")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_ERROR_REPORTING", "1")
                    // The MCP tools in the model's list, not behind its
                    // ToolSearch (which the fake does not play).
                    .env("ENABLE_TOOL_SEARCH", "false");
                command
            }
            Agent::Codex => {
                let codex = home.join(".codex");
                let mut toml = format!(
                    "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\
                     [model_providers.fake]\nname = \"fake\"\nbase_url = \"{model}/v1\"\n\
                     wire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n\
                     [features]\nplugins = false\n[analytics]\nenabled = false\n[feedback]\nenabled = false\n"
                );
                match server {
                    Server::Stdio => toml.push_str(&codex_toml()),
                    Server::Http(url) => toml.push_str(&format!("[mcp_servers.everything]\nurl = \"{url}\"")),
                }
                if let Some(secs) = ask.timeout_secs {
                    // The snippet ends in its [mcp_servers.everything] table.
                    toml.push_str(&format!("\ntool_timeout_sec = {secs}"));
                }
                toml.push('\n');
                write(&codex.join("config.toml"), &toml);
                let mut command = Command::new("codex");
                command
                    .args(["exec", "--skip-git-repo-check", "-C"])
                    .arg(work)
                    .arg(PROMPT)
                    .env("CODEX_HOME", &codex)
                    .env("OPENAI_API_KEY", "dummy");
                command
            }
            Agent::Gemini => {
                let mut entry = entry;
                entry["trust"] = json!(true);
                let settings = json!({
                    "mcpServers": {"everything": entry},
                    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
                });
                write(&home.join(".gemini/settings.json"), &settings.to_string());
                let mut command = Command::new("gemini");
                command
                    .args(["-p", PROMPT, "--approval-mode", "yolo"])
                    .env("GEMINI_API_KEY", "dummy")
                    .env("GOOGLE_GEMINI_BASE_URL", model)
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    .env("GEMINI_TELEMETRY_ENABLED", "false");
                command
            }
            Agent::Sdk => {
                // The pinned Node 22 by path (tests/src/node.rs).
                let mut command = Command::new(crate::node::node().expect("the pinned node"));
                command
                    .arg(peers().join("node/sdk_host.mjs"))
                    .arg(entry.to_string())
                    .arg(ask.tool.unwrap_or("none"))
                    .arg((ask.timeout_secs.unwrap_or(0) * 1000).to_string());
                command
            }
            Agent::Pydantic => {
                let mut command = Command::new("python3");
                command
                    .arg(peers().join("python/pydantic_host.py"))
                    .arg(entry.to_string())
                    .arg(ask.tool.unwrap_or("none"))
                    .env("PYTHONPATH", peers().join("python/site"));
                command
            }
        };
        command.current_dir(work);
        command
    }
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("config folder");
    }
    std::fs::write(path, text).expect("write the host's config");
}
