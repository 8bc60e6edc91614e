//! The cases every host goes through (tests/tests/agents_*.rs call them):
//! a form answered, declined and cancelled; the host killed mid-form, or
//! shut down its own way; a run with no form; the same over HTTP to
//! `elicit serve`; the host cancelling its own request.
//!
//! Each prints one `agents-table |` line (host, version, transport, case,
//! result, withdrawal time, processes left) for the closing table.

use std::time::{Duration, Instant};

use serde_json::json;

use super::chat_hosts::Entry;
use super::{AGENT_DEADLINE, Agent, Ask, Bench, Events, Server};
use crate::procs::kill;
use crate::{Event, Shown, binary};

/// The tool of server-everything that asks a form.
const TOOL: &str = "trigger-elicitation-request";

/// A host's leftovers must be gone this soon after a host that stopped
/// the proxy (a signal, or a clean end): the proxy ends with it, and the
/// warden ends the server's tree within a second of the proxy. Twice
/// that was too tight on a loaded machine: Codex's tree took 2.07 s after
/// its SIGINT at load average 7 (the table prints the time taken).
const LEFTOVER_DEADLINE: Duration = Duration::from_secs(4);

/// A host killed with SIGKILL only closes the proxy's input, and the proxy
/// gives the server its exit grace (5 s by default, the documented
/// snippet's) before SIGTERM; then the proxy's end and the warden's second.
const LEFTOVER_AFTER_KILL: Duration = Duration::from_secs(8);

/// A form must be withdrawn this soon after its host died.
const WITHDRAW_DEADLINE: Duration = Duration::from_secs(1);

/// How a host goes away mid-form.
#[derive(Debug, Clone, Copy)]
pub enum Death {
    /// `kill -9` of the host.
    Killed,
    /// `SIGINT` to the host, which shuts down its own way (Claude Code:
    /// SIGINT, SIGTERM, SIGKILL to its servers; Codex: SIGTERM to the
    /// server's group; the SDKs close the server's input).
    ShutDown,
    /// `SIGINT` to the host's whole process group, as Ctrl-C in the
    /// terminal sends it: the CLI, the process it relaunched itself as
    /// (Qwen Code, Copilot CLI), and the proxies it started, all at once.
    /// Cline's hub, in a session of its own, is not hit.
    Interrupted,
}

fn table(agent: Agent, transport: &str, case: &str, result: &str, withdrawn: Option<Duration>, left: &Left) {
    let withdrawn = withdrawn.map_or("-".to_owned(), |d| format!("{} ms", d.as_millis()));
    let hubs = match left.hubs {
        0 => String::new(),
        n => format!(" (+{n} hub, stopped by the test)"),
    };
    eprintln!(
        "agents-table | {} | {} | {transport} | {case} | {result} | {withdrawn} | {}{hubs}",
        agent.name(),
        agent.version(),
        left.left
    );
}

/// How long the server's tree took to go after a run's end, where that
/// was more than a second (the host left it to the proxy's exit grace).
fn slow(left: &Left) -> String {
    if left.took > Duration::from_secs(1) {
        format!(" (server gone in {} ms)", left.took.as_millis())
    } else {
        String::new()
    }
}

/// What a run left behind.
struct Left {
    /// Processes still working in the bench's folder after the limit,
    /// killed by the test: the host's hub that did not stop when asked
    /// counts here.
    left: usize,
    /// The host's hubs that outlived it, as they are meant to (Cline's),
    /// stopped by the test with SIGTERM once everything else had gone.
    hubs: usize,
    /// How long everything but the hub took to go.
    took: Duration,
}

async fn show(bench: &mut Bench, run: &mut super::Run) -> Shown {
    let deadline = AGENT_DEADLINE;
    match bench.frontend.next_within(deadline).await {
        Some(Event::Show(shown)) => shown,
        Some(other) => panic!("{}: expected a form, got {other:?}", bench.agent.name()),
        None => {
            panic!(
                "{}: no form within {deadline:?}; the model saw {:?}\nstill running: {:?}",
                bench.agent.name(),
                run.seen(),
                bench.survivors()
            )
        }
    }
}

/// Waits until nothing of the host is left in its working folder; what is
/// left after `limit` is killed (the test's own processes, by pid) and
/// counted. A hub the host leaves by design ([`Agent::hub`]) is not
/// waited for: once the rest has gone it is stopped and counted apart.
async fn leftovers(bench: &Bench) -> Left {
    let limit = if bench.agent.ends_servers_on_exit() {
        LEFTOVER_DEADLINE
    } else {
        LEFTOVER_AFTER_KILL
    };
    leftovers_within(bench, limit).await
}

async fn leftovers_within(bench: &Bench, limit: Duration) -> Left {
    let is_hub = |cmdline: &str| bench.agent.hub().is_some_and(|marker| cmdline.contains(marker));
    let (left, took) = settle(bench, limit, &is_hub).await;
    let hubs: Vec<u32> = bench
        .survivors()
        .into_iter()
        .filter(|(_, cmdline)| is_hub(cmdline))
        .map(|(pid, _)| pid)
        .collect();
    if hubs.is_empty() {
        return Left { left, hubs: 0, took };
    }
    eprintln!(
        "{}: its hub outlived it: {hubs:?}; stopping it",
        bench.agent.name()
    );
    for pid in &hubs {
        signal("-TERM", *pid);
    }
    // The hub and whatever it still ran must go once it is told to.
    let (after_hub, _) = settle(bench, LEFTOVER_DEADLINE, &|_: &str| false).await;
    Left {
        left: left + after_hub,
        hubs: hubs.len(),
        took,
    }
}

/// Waits up to `limit` for every process in the bench's folder but those
/// `spared` to go, then kills and counts the rest.
async fn settle(bench: &Bench, limit: Duration, spared: &dyn Fn(&str) -> bool) -> (usize, Duration) {
    let started = Instant::now();
    loop {
        let left: Vec<_> = bench
            .survivors()
            .into_iter()
            .filter(|(_, cmdline)| !spared(cmdline))
            .collect();
        if left.is_empty() {
            return (0, started.elapsed());
        }
        if started.elapsed() > limit {
            eprintln!("{}: left behind {left:?}", bench.agent.name());
            for (pid, _) in &left {
                signal("-KILL", *pid);
            }
            return (left.len(), started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `kill SIGNAL PID` for a process that may have gone meanwhile.
fn signal(signal: &str, pid: u32) {
    let _ = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status();
}

/// The process that started `elicit proxy` in the bench's working folder.
fn proxy_parent(bench: &Bench) -> Option<u32> {
    // By name or by path: Copilot CLI starts it by the path it found.
    let (proxy, _) = bench.survivors().into_iter().find(|(_, cmdline)| {
        let mut words = cmdline.split(' ');
        let program = words.next().unwrap_or_default();
        (program == "elicit" || program.ends_with("/elicit")) && words.next() == Some("proxy")
    })?;
    crate::procs::processes()
        .into_iter()
        .find(|(pid, _, _)| *pid == proxy)
        .map(|(_, ppid, _)| ppid)
}

/// A form of server-everything's `trigger-elicitation-request`, answered
/// `action` by the scripted front-end: the answer reaches the server and
/// the tool's result the model's next request; the host exits 0 and leaves
/// nothing behind.
pub async fn answered(agent: Agent, action: &str) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    answered_on(&mut bench, &Server::Stdio, action, "stdio", Entry::Documented).await;
}

/// As [`answered`] with `accept`, for the CLIs of chat_hosts.rs run from a
/// config that only `elicit wrap` touched ([`Bench::run_wrapped`]).
pub async fn answered_from_wrap(agent: Agent) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    answered_on(
        &mut bench,
        &Server::Stdio,
        "accept",
        "stdio, elicit wrap",
        Entry::Plain,
    )
    .await;
}

async fn answered_on(bench: &mut Bench, server: &Server, action: &str, transport: &str, entry: Entry) {
    let agent = bench.agent;
    let ask = Ask {
        tool: Some(TOOL),
        timeout_secs: None,
    };
    let mut run = match entry {
        Entry::Documented => bench.run(server, &ask).await,
        Entry::Plain => bench.run_wrapped(server, &ask).await,
    };
    let shown = show(bench, &mut run).await;
    assert_eq!(
        shown.request["mode"].as_str().unwrap_or("form"),
        "form",
        "{shown:?}"
    );
    // Where the host's clientInfo is a library's placeholder, the stdio
    // proxy shows the host's process instead (elicit_proxy::parent).
    eprintln!(
        "{} over {transport}: the user sees the host as {:?}",
        agent.name(),
        shown.host
    );
    if let (Server::Stdio, Some(expected)) = (server, agent.origin()) {
        assert_eq!(
            shown.host.as_deref(),
            Some(expected),
            "{}: the origin's host",
            agent.name()
        );
    }
    let content = if action == "accept" {
        json!({"name": "Ada Lovelace"})
    } else {
        serde_json::Value::Null
    };
    bench
        .frontend
        .answer(&shown, action, content)
        .await
        .expect("answer");
    let result = run.tool_result().await;
    let expected = match action {
        "accept" => "Ada Lovelace",
        "decline" => "declined",
        _ => "cancelled",
    };
    assert!(
        result.contains(expected),
        "{}: the model got {result:?}, not {expected:?}",
        agent.name()
    );
    if action == "accept" {
        assert!(
            result.contains("42"),
            "{}: the schema's defaults were filled in: {result}",
            agent.name()
        );
    }
    let status = run.exit().await;
    assert!(
        status.success(),
        "{} exited {status}:\n{}",
        agent.name(),
        run.log()
    );
    let left = leftovers(bench).await;
    let case = format!("{action}{}", slow(&left));
    table(agent, transport, &case, "ok", None, &left);
    assert_eq!(left.left, 0, "{}: processes left after a {action}", agent.name());
}

/// The host dies mid-form: the form is withdrawn (`client-gone`) within a
/// second and nothing of the server is left.
pub async fn killed_mid_form(agent: Agent, death: Death) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    let ask = Ask {
        tool: Some(TOOL),
        timeout_secs: None,
    };
    let mut run = bench.run(&Server::Stdio, &ask).await;
    let shown = show(&mut bench, &mut run).await;
    // The host is the proxy's parent: the Gemini CLI's command relaunches
    // itself as a child process with a larger heap, which is the one that
    // starts the servers (and outlives a KILLed launcher, and never hears
    // of a SIGINT sent to it).
    let host = proxy_parent(&bench).unwrap_or_else(|| run.pid());
    let died = Instant::now();
    match death {
        Death::Killed => kill("-KILL", host),
        Death::ShutDown => kill("-INT", host),
        // The CLIs of chat_hosts.rs lead a process group of their own.
        Death::Interrupted => {
            let status = std::process::Command::new("kill")
                .args(["-INT", "--", &format!("-{}", run.pid())])
                .status()
                .expect("kill runs");
            assert!(status.success(), "kill -INT the group of {}", run.pid());
        }
    }
    let event = bench.frontend.next_within(AGENT_DEADLINE).await;
    let event = event.unwrap_or_else(|| panic!("{}: the form was never withdrawn", agent.name()));
    let withdrawn = died.elapsed();
    let _ = tokio::time::timeout(AGENT_DEADLINE, run.child.wait()).await;
    let limit = match death {
        Death::ShutDown if agent.stops_servers() => LEFTOVER_DEADLINE,
        Death::Interrupted => agent.ctrl_c_lingers().unwrap_or(LEFTOVER_AFTER_KILL),
        Death::Killed | Death::ShutDown => LEFTOVER_AFTER_KILL,
    };
    let left = leftovers_within(&bench, limit).await;
    eprintln!(
        "{} {death:?}: the server's tree gone {:?} after the host",
        agent.name(),
        left.took
    );
    let case = format!("{death:?} mid-form (gone in {} ms)", left.took.as_millis());
    // Killed, the host just goes (`client-gone`); shutting down its own
    // way, a host may first cancel the call it is in (Codex sends
    // `notifications/cancelled` on SIGINT), which withdraws the form as
    // `cancelled`.
    let reason_ok = |reason: &str| match death {
        Death::Killed => reason == "client-gone",
        Death::ShutDown | Death::Interrupted => reason == "client-gone" || reason == "cancelled",
    };
    let ok = matches!(&event, Event::Withdraw(form, reason) if *form == shown.form && reason_ok(reason))
        && withdrawn < WITHDRAW_DEADLINE
        && left.left == 0;
    table(
        agent,
        "stdio",
        &case,
        if ok { "ok" } else { "FAIL" },
        Some(withdrawn),
        &left,
    );
    match &event {
        Event::Withdraw(form, reason) => {
            assert_eq!(form, &shown.form);
            assert!(
                reason_ok(reason),
                "{} {death:?}: withdrawn as {reason:?}",
                agent.name()
            );
            eprintln!("{} {death:?}: withdrawn as {reason:?}", agent.name());
        }
        other => panic!("{}: expected the form withdrawn, got {other:?}", agent.name()),
    }
    assert!(
        withdrawn < WITHDRAW_DEADLINE,
        "{} {death:?}: withdrawn after {withdrawn:?}",
        agent.name()
    );
    assert_eq!(left.left, 0, "{} {death:?}: processes left", agent.name());
}

/// A run whose model calls no tool: the host starts the server, ends, and
/// leaves nothing behind.
pub async fn no_form(agent: Agent) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    let ask = Ask {
        tool: None,
        timeout_secs: None,
    };
    let mut run = bench.run(&Server::Stdio, &ask).await;
    let status = run.exit().await;
    let left = leftovers(&bench).await;
    table(
        agent,
        "stdio",
        &format!("no form{}", slow(&left)),
        if left.left == 0 { "ok" } else { "FAIL" },
        None,
        &left,
    );
    assert!(
        status.success(),
        "{} exited {status}:\n{}",
        agent.name(),
        run.log()
    );
    assert!(bench.frontend.is_idle(), "no form was asked");
    assert_eq!(
        left.left,
        0,
        "{}: processes left after a run with no form",
        agent.name()
    );
}

/// The host configured with `{"type": "http", "url": …}` of `elicit serve`
/// in front of `npx -y @modelcontextprotocol/server-everything`: a form
/// accepted reaches the model the same way.
pub async fn over_http(agent: Agent) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    let mut serve = tokio::process::Command::new(binary("elicit"))
        .args([
            "--bus",
            bench.bus.address(),
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--",
        ])
        .args(["npx", "-y", "@modelcontextprotocol/server-everything"])
        .current_dir(crate::mcp::peers().join("node"))
        .env("PATH", crate::node::node_path().expect("node"))
        .env("HOME", bench.bus.dir())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start elicit serve");
    let mut printed = Events::read(serve.stdout.take().expect("stdout"));
    let url = printed
        .next_where(crate::DEADLINE, |_| true)
        .await
        .and_then(|v| v.as_str().map(str::to_owned))
        .expect("elicit serve prints its URL");
    answered_on(
        &mut bench,
        &Server::Http(url),
        "accept",
        "http (elicit serve)",
        Entry::Documented,
    )
    .await;
}

/// The host gives up on its call (Codex's `tool_timeout_sec`, the SDK's
/// request timeout, the per-server timeouts of opencode, Qwen Code,
/// Copilot CLI and Cline, Continue's fixed 60 s) and sends
/// `notifications/cancelled`: the form only that call waited on is
/// withdrawn at once, reason `cancelled` (Cline drops the connection
/// instead: `client-gone`), and (where the host shows it) the keep-alive
/// progress for the call stops.
pub async fn host_cancels(agent: Agent) {
    let Some(mut bench) = Bench::new(agent).await else {
        return;
    };
    let secs = agent.cancel_after_secs();
    let ask = Ask {
        tool: Some(TOOL),
        timeout_secs: Some(secs),
    };
    let mut run = bench.run(&Server::Stdio, &ask).await;
    let shown = show(&mut bench, &mut run).await;
    let asked = Instant::now();
    let event = bench
        .frontend
        .next_within(Duration::from_secs(secs) + AGENT_DEADLINE)
        .await
        .unwrap_or_else(|| panic!("{}: the form was never withdrawn", agent.name()));
    let after = asked.elapsed();
    let reason = agent.gives_up_as();
    let withdrawn = matches!(&event, Event::Withdraw(form, why) if *form == shown.form && why == reason);
    // The host's timer starts at its call, a little before the form is
    // shown: the form goes within a second of the host giving up.
    let limit = Duration::from_secs(agent.fixed_call_limit().unwrap_or(secs)) + WITHDRAW_DEADLINE;
    let at_once = after < limit;
    // The scripted hosts print each progress notification that comes for
    // a request they gave up: the proxy's keep-alive is every 10 s.
    let mut late = None;
    if agent == Agent::Sdk {
        late = run
            .events
            .next_where(Duration::from_secs(12), |v| v["late_progress"].is_object())
            .await;
    }
    let _ = tokio::time::timeout(AGENT_DEADLINE, run.child.wait()).await;
    let left = leftovers(&bench).await;
    let ok = withdrawn && at_once && late.is_none();
    table(
        agent,
        "stdio",
        "host cancels (timeout)",
        if ok { "ok" } else { "FAIL" },
        Some(after),
        &left,
    );
    assert!(
        withdrawn,
        "{}: expected the form withdrawn as {reason}, got {event:?}",
        agent.name()
    );
    assert!(
        at_once,
        "{}: the form was withdrawn {after:?} after it was asked; the host gives up at {limit:?}",
        agent.name()
    );
    assert!(
        late.is_none(),
        "{}: keep-alive after the cancel: {late:?}",
        agent.name()
    );
}

/// The cases every host goes through, as the tests of one test binary (one
/// binary per host, so that hosts run one at a time within it):
/// `agent_cases!(Agent::Claude);`. Hosts with a per-call timeout add
/// `with_host_cancel` for [`host_cancels`]; the CLIs of chat_hosts.rs add
/// `chat`, which is that and Ctrl-C to their process group.
#[macro_export]
macro_rules! agent_cases {
    ($agent:expr, chat) => {
        $crate::agent_cases!($agent, with_host_cancel);

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn ctrl_c_to_the_hosts_group_mid_form_withdraws_it_and_leaves_nothing() {
            $crate::agents::cases::killed_mid_form($agent, $crate::agents::cases::Death::Interrupted).await;
        }
    };
    ($agent:expr, with_host_cancel) => {
        $crate::agent_cases!($agent);

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn the_hosts_timeout_cancels_the_form() {
            $crate::agents::cases::host_cancels($agent).await;
        }
    };
    ($agent:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_form_accepted_reaches_the_server_and_the_model() {
            $crate::agents::cases::answered($agent, "accept").await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_form_declined_reaches_the_model_as_declined() {
            $crate::agents::cases::answered($agent, "decline").await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_form_cancelled_reaches_the_model_as_cancelled() {
            $crate::agents::cases::answered($agent, "cancel").await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn the_host_killed_mid_form_withdraws_it_and_leaves_nothing() {
            $crate::agents::cases::killed_mid_form($agent, $crate::agents::cases::Death::Killed).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn the_hosts_own_shutdown_mid_form_withdraws_it_and_leaves_nothing() {
            $crate::agents::cases::killed_mid_form($agent, $crate::agents::cases::Death::ShutDown).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_run_with_no_form_leaves_nothing() {
            $crate::agents::cases::no_form($agent).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn over_http_to_elicit_serve_a_form_reaches_the_model() {
            $crate::agents::cases::over_http($agent).await;
        }
    };
}
