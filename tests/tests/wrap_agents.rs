//! Real hosts started from configs that only `elicit wrap` touched. Each
//! host's server is added the plain way, with the host's own `mcp add`
//! (`npx -y @modelcontextprotocol/server-everything`, no proxy), then
//! `elicit wrap HOST` edits that file, and the host runs from it against
//! the fake model of tests/src/agents: the form reaches the broker and
//! the answer reaches the model.
//!
//! Bench writes each host's configuration from the docs' snippet (already
//! wrapped); the hook given to `Bench::run_then` replaces that entry with
//! the plain one before `wrap` runs, so what the host reads is the CLI's
//! entry as `wrap` left it.
//!
//! The five CLIs of tests/src/agents/chat_hosts.rs (opencode, Qwen Code,
//! Copilot CLI, Cline, Continue) go through `Bench::run_wrapped`: their
//! own `mcp add` (or their documented file) gets the plain server, the
//! real `elicit wrap HOST` wraps it (checked by tests/src/agents/wrapping.rs),
//! and the accept case of tests/src/agents/cases.rs runs on the result.

use std::path::Path;
use std::process::Command;

use elicit_tests::agents::{AGENT_DEADLINE, Agent, Ask, Bench, Server, cases};
use elicit_tests::{Event, binary};
use serde_json::{Value, json};

const EVERYTHING: [&str; 3] = ["npx", "-y", "@modelcontextprotocol/server-everything"];

/// Runs `program args` for the host's user: `HOME` is the bench's, the
/// pinned node first on `PATH`, in the project folder. Returns what it
/// printed.
fn run(program: &Path, args: &[&str], home: &Path, work: &Path) -> String {
    let output = Command::new(program)
        .args(args)
        .current_dir(work)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .env("PATH", elicit_tests::node::node_path().expect("the pinned node"))
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("GEMINI_TELEMETRY_ENABLED", "false")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    let shown = format!(
        "{} {args:?}: {:?}\n{}{}",
        program.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{shown}");
    shown
}

fn cli(name: &str) -> std::path::PathBuf {
    elicit_tests::mcp::peers()
        .join("node/node_modules/.bin")
        .join(name)
}

/// `HOST mcp add …everything`, then `elicit wrap HOST`, checking that
/// `file` went from plain to wrapped.
fn add_then_wrap(host: &str, add: &[&str], file: &Path, home: &Path, work: &Path) {
    let args: Vec<&str> = add.iter().chain(EVERYTHING.iter()).copied().collect();
    run(&cli(host), &args, home, work);
    let plain = std::fs::read_to_string(file).expect("the host's config");
    assert!(
        plain.contains("server-everything") && !plain.contains("proxy"),
        "{plain}"
    );
    let wrapped = run(&binary("elicit"), &["wrap", host], home, work);
    assert!(wrapped.contains("wrapped everything"), "{wrapped}");
    let now = std::fs::read_to_string(file).expect("the host's config");
    assert!(
        now.contains("\"proxy\", \"--\", \"npx\"") || now.contains("\"proxy\",\n"),
        "{now}"
    );
}

/// The host runs from its wrapped config; the form is accepted and the
/// model gets the answer.
async fn wrapped_host_answers(agent: Agent, configure: impl FnOnce(&Path, &Path)) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    let ask = Ask {
        tool: Some("trigger-elicitation-request"),
        timeout_secs: None,
    };
    let work = bench.work().to_owned();
    let mut host = bench
        .run_then(&Server::Stdio, &ask, |home| configure(home, &work))
        .await;
    let shown = match bench.frontend.next_within(AGENT_DEADLINE).await {
        Some(Event::Show(shown)) => shown,
        other => panic!(
            "{}: no form from the wrapped server: {other:?}\n{}",
            agent.name(),
            host.log()
        ),
    };
    bench
        .frontend
        .answer(&shown, "accept", json!({"name": "Ada Lovelace"}))
        .await
        .expect("answer");
    let result = host.tool_result().await;
    assert!(
        result.contains("Ada Lovelace"),
        "{}: the model got {result:?}",
        agent.name()
    );
    let status = host.exit().await;
    assert!(
        status.success(),
        "{} exited {status}:\n{}",
        agent.name(),
        host.log()
    );
    eprintln!(
        "wrap-table | {} | {} | mcp add → elicit wrap → host → form accepted → model | ok",
        agent.name(),
        agent.version()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_from_a_config_only_elicit_wrap_touched() {
    wrapped_host_answers(Agent::Claude, |home, work| {
        // Project scope: the project's .mcp.json.
        let project = work.join(".mcp.json");
        add_then_wrap(
            "claude",
            &["mcp", "add", "-s", "project", "everything", "--"],
            &project,
            home,
            work,
        );
        // `claude -p --mcp-config FILE`: FILE, which Bench wrote from the
        // docs' snippet, now is the file wrap wrote.
        let config = home.join("mcp.json");
        std::fs::remove_file(&config).expect("remove the snippet's config");
        std::os::unix::fs::symlink(&project, &config).expect("link");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_from_a_config_only_elicit_wrap_touched() {
    wrapped_host_answers(Agent::Codex, |home, work| {
        // Bench's config.toml ends with the docs' [mcp_servers.everything]
        // snippet: cut it; `codex mcp add` writes the plain entry.
        let config = home.join(".codex/config.toml");
        let text = std::fs::read_to_string(&config).expect("config.toml");
        let cut = text.find("[mcp_servers.everything]").expect("the snippet");
        std::fs::write(&config, &text[..cut]).expect("write config.toml");
        add_then_wrap("codex", &["mcp", "add", "everything", "--"], &config, home, work);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_from_a_config_only_elicit_wrap_touched() {
    wrapped_host_answers(Agent::Gemini, |home, work| {
        // Bench's settings.json holds the docs' entry: take it out, and
        // let `gemini mcp add` write the plain one (trusted, as Bench's).
        let settings = home.join(".gemini/settings.json");
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).expect("settings")).expect("JSON");
        value["mcpServers"]
            .as_object_mut()
            .expect("mcpServers")
            .remove("everything");
        std::fs::write(&settings, serde_json::to_string_pretty(&value).expect("JSON")).expect("write");
        add_then_wrap(
            "gemini",
            &["mcp", "add", "-s", "user", "--trust", "everything"],
            &settings,
            home,
            work,
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_from_a_config_only_elicit_wrap_touched() {
    cases::answered_from_wrap(Agent::OpenCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_from_a_config_only_elicit_wrap_touched() {
    cases::answered_from_wrap(Agent::Qwen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_cli_from_a_config_only_elicit_wrap_touched() {
    cases::answered_from_wrap(Agent::Copilot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cline_from_a_config_only_elicit_wrap_touched() {
    cases::answered_from_wrap(Agent::Cline).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_cli_from_a_config_only_elicit_wrap_touched() {
    cases::answered_from_wrap(Agent::Continue).await;
}
