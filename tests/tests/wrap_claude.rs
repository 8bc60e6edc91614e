//! Claude Code started from a config that only `elicit wrap` touched: the
//! server added with Claude Code's own `claude mcp add -s project` (a
//! plain `npx -y @modelcontextprotocol/server-everything` entry in the
//! project's `.mcp.json`), then `elicit wrap claude` in the project, then
//! `claude -p` reading that very file. The form reaches the broker and the
//! answer reaches the model (the fake model of tests/src/agents).

use std::path::Path;
use std::process::Command;

use elicit_tests::agents::{AGENT_DEADLINE, Agent, Ask, Bench, Server};
use elicit_tests::{Event, binary};
use serde_json::json;

/// Runs `program args` for the host's user: `HOME` is the bench's, the
/// pinned node first on `PATH`, in the project folder.
fn run(program: &Path, args: &[&str], home: &Path, work: &Path) -> String {
    let output = Command::new(program)
        .args(args)
        .current_dir(work)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("XDG_CONFIG_HOME")
        .env("PATH", elicit_tests::node::node_path().expect("the pinned node"))
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_from_a_config_only_elicit_wrap_touched() {
    let Some(mut bench) = Bench::new(Agent::Claude).await else {
        return;
    };
    let ask = Ask {
        tool: Some("trigger-elicitation-request"),
        timeout_secs: None,
    };
    let work = bench.work().to_owned();
    let mut claude_run = bench
        .run_then(&Server::Stdio, &ask, |home| {
            let claude = elicit_tests::mcp::peers().join("node/node_modules/.bin/claude");
            run(
                &claude,
                &[
                    "mcp",
                    "add",
                    "-s",
                    "project",
                    "everything",
                    "--",
                    "npx",
                    "-y",
                    "@modelcontextprotocol/server-everything",
                ],
                home,
                &work,
            );
            let project = work.join(".mcp.json");
            let plain = std::fs::read_to_string(&project).expect(".mcp.json");
            assert!(!plain.contains("proxy"), "{plain}");
            let wrapped = run(&binary("elicit"), &["wrap", "claude"], home, &work);
            assert!(wrapped.contains("wrapped everything"), "{wrapped}");
            let text = std::fs::read_to_string(&project).expect(".mcp.json");
            let entry: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(entry["mcpServers"]["everything"]["args"][0], "proxy", "{text}");
            // The host reads the file wrap wrote (its --mcp-config, which
            // Bench wrote from the docs' snippet, now points there).
            let config = home.join("mcp.json");
            std::fs::remove_file(&config).expect("remove the snippet's config");
            std::os::unix::fs::symlink(&project, &config).expect("link");
        })
        .await;
    let shown = match bench.frontend.next_within(AGENT_DEADLINE).await {
        Some(Event::Show(shown)) => shown,
        other => panic!("no form from the wrapped server: {other:?}\n{}", claude_run.log()),
    };
    bench
        .frontend
        .answer(&shown, "accept", json!({"name": "Ada Lovelace"}))
        .await
        .expect("answer");
    let result = claude_run.tool_result().await;
    assert!(result.contains("Ada Lovelace"), "the model got {result:?}");
    let status = claude_run.exit().await;
    assert!(status.success(), "claude exited {status}:\n{}", claude_run.log());
    eprintln!(
        "wrap-table | claude-code | {} | .mcp.json (project) | wrap → claude -p → form accepted → model | ok",
        Agent::Claude.version()
    );
}
