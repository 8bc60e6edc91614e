//! Real coding agents and SDK hosts as peers (issue 29): Claude Code,
//! Codex and the Gemini CLI, each against a fake model of its vendor's API
//! on loopback (tests/peers/python/fake_model.py), and the TypeScript SDK
//! and pydantic-ai as scripted hosts. [`Bench`] is one test's world (a
//! private bus, the real daemon, a scripted front-end, a home and a working
//! folder of its own); [`Run`] is one run of the host in it; `cases` are
//! the cases every host goes through.
//!
//! Every host runs in the bench's working folder, which everything it
//! starts inherits: the processes still working there after the host has
//! gone are the ones it left behind ([`crate::procs::working_in`]).

pub mod cases;
pub mod chat_hosts;
mod events;
mod hosts;
mod snippets;
mod wrapping;

pub use events::Events;
pub use hosts::{Agent, Ask, Server};

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::process::{Child, Command};

use crate::mcp::{missing, peers, system};
use crate::{Daemon, PrivateBus, TestFrontend, binary};

/// How long a host may take to start, list its tools and call one: a CLI
/// starting under a loaded CI machine takes many seconds.
pub const AGENT_DEADLINE: Duration = Duration::from_secs(120);

/// One host runs at a time in a test binary: Codex runs started together
/// wait on each other (state it shares beyond `CODEX_HOME`), and two CLIs
/// starting at once on a small CI machine blow every deadline.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One test's world.
pub struct Bench {
    /// The host under test.
    pub agent: Agent,
    /// The private bus.
    pub bus: PrivateBus,
    /// The daemon on it.
    pub daemon: Daemon,
    /// The human, scripted.
    pub frontend: TestFrontend,
    work: PathBuf,
    /// The port of the host's hub (Cline's): one of its own for each
    /// bench, so that a hub still stopping from the last test, on the
    /// default port, is never the one this test's CLI reaches.
    hub_port: Option<u16>,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

impl Bench {
    /// A bench for `agent`, or `None` when it is not installed (a failure
    /// naming it under `CI`).
    pub async fn new(agent: Agent) -> Option<Bench> {
        let (file, package) = agent.installed();
        if !file.exists() {
            return missing(package);
        }
        crate::node::node()?;
        let turn = ONE_AT_A_TIME.lock().await;
        let (bus, daemon, frontend) = system().await;
        // HOME is the bus's folder, where the daemon records its bus: hosts
        // that filter the environment still pass HOME, and the proxy finds
        // elicitd through that record.
        let home = bus.dir();
        std::fs::write(
            home.join(".npmrc"),
            "offline=true\nupdate-notifier=false\nfund=false\naudit=false\n",
        )
        .expect("write .npmrc");
        let work = home.join("work");
        std::fs::create_dir(&work).expect("working folder");
        // `npx -y @modelcontextprotocol/server-everything` finds the pinned
        // package here, offline, as in a project that depends on it.
        std::os::unix::fs::symlink(peers().join("node/node_modules"), work.join("node_modules"))
            .expect("link node_modules");
        std::fs::copy(peers().join("node/package.json"), work.join("package.json"))
            .expect("copy package.json");
        let hub_port = agent.hub().map(|_| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .expect("a free port for the hub")
        });
        Some(Bench {
            agent,
            bus,
            daemon,
            frontend,
            work,
            hub_port,
            _turn: turn,
        })
    }

    /// The folder every host of this bench works in.
    pub fn work(&self) -> &Path {
        &self.work
    }

    /// What is still running in the working folder, the host itself
    /// included while it runs.
    pub fn survivors(&self) -> Vec<(u32, String)> {
        crate::procs::working_in(&self.work)
    }

    /// Starts the host on `server`, asking `ask`.
    pub async fn run(&self, server: &Server, ask: &Ask) -> Run {
        self.run_then(server, ask, |_| {}).await
    }

    /// As [`Bench::run`], with `configured(home)` called once the host's
    /// configuration is written and before the host starts: a test that
    /// has `elicit wrap` make the configuration (tests/tests/wrap_agents.rs).
    pub async fn run_then(&self, server: &Server, ask: &Ask, configured: impl FnOnce(&Path)) -> Run {
        self.start(server, ask, chat_hosts::Entry::Documented, configured)
            .await
    }

    /// As [`Bench::run`] for the CLIs of chat_hosts.rs, from a config that
    /// only `elicit wrap` touched: the agent's own `mcp add` (or its
    /// documented file) gets the plain server, then the real `elicit wrap
    /// HOST` wraps it, checked by wrapping.rs, then the agent starts.
    pub async fn run_wrapped(&self, server: &Server, ask: &Ask) -> Run {
        assert!(
            self.agent.is_chat(),
            "{} is wrapped by its test",
            self.agent.name()
        );
        self.start(server, ask, chat_hosts::Entry::Plain, |_| {}).await
    }

    async fn start(
        &self,
        server: &Server,
        ask: &Ask,
        entry: chat_hosts::Entry,
        configured: impl FnOnce(&Path),
    ) -> Run {
        let home = self.bus.dir();
        let mut fake = None;
        let mut model_url = None;
        let mut model_events = None;
        if let Some(dialect) = self.agent.dialect() {
            let mut child = Command::new("python3")
                .arg(peers().join("python/fake_model.py"))
                .arg(dialect)
                .arg(ask.tool.unwrap_or("none"))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .expect("python3 runs the fake model");
            let mut events = Events::read(child.stdout.take().expect("stdout"));
            let url = events
                .next_where(crate::DEADLINE, |_| true)
                .await
                .and_then(|v| v.as_str().map(str::to_owned))
                .expect("the fake model prints its URL");
            model_url = Some(url);
            model_events = Some(events);
            fake = Some(child);
        }
        let log = home.join(format!("{}.log", self.agent.name()));
        let log_file = std::fs::File::create(&log).expect("host log");
        if self.agent.is_chat() {
            let setup = |program: &str| {
                let mut command = Command::new(program);
                self.environ(&mut command);
                command.current_dir(&self.work).stdin(Stdio::null());
                command
            };
            let model = model_url.as_deref().unwrap_or_default();
            chat_hosts::configure(self.agent, &setup, home, &self.work, server, ask, model, entry).await;
            if entry == chat_hosts::Entry::Plain {
                wrapping::wrap_and_check(self.agent, &setup).await;
            }
        }
        let mut command = self
            .agent
            .command(home, &self.work, server, ask, model_url.as_deref());
        configured(home);
        self.environ(&mut command);
        if self.agent.is_chat() {
            // A group of its own, as a shell's job: Ctrl-C is then a
            // signal to that group (cases::Death::Interrupted).
            command.process_group(0);
        }
        command
            .stdin(Stdio::null())
            .stdout(if model_events.is_some() {
                Stdio::from(log_file.try_clone().expect("log"))
            } else {
                Stdio::piped()
            })
            .stderr(log_file)
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", self.agent.name()));
        let events = match model_events {
            Some(events) => events,
            None => Events::read(child.stdout.take().expect("stdout")),
        };
        Run {
            agent: self.agent,
            child,
            events,
            _fake: fake,
            log,
        }
    }
}

impl Bench {
    /// The environment every host (and its setup commands) runs with:
    /// `elicit` and the pinned node first on `PATH`, the bench's home and
    /// bus, no XDG folders of the user's.
    fn environ(&self, command: &mut Command) {
        let path = crate::node::node_path().expect("the pinned node");
        let mut dirs = vec![
            binary("elicit")
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        ];
        dirs.extend(std::env::split_paths(&path));
        command
            .env("PATH", std::env::join_paths(dirs).expect("PATH"))
            .env("HOME", self.bus.dir())
            .env("DBUS_SESSION_BUS_ADDRESS", self.bus.address())
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env("NO_UPDATE_NOTIFIER", "1");
        if self.agent.is_chat() {
            // A shell sets PWD to the folder it starts the host in, and
            // opencode takes its project from PWD, not from its cwd.
            command.env("PWD", &self.work);
        }
        if let Some(port) = self.hub_port {
            command.env("CLINE_HUB_PORT", port.to_string());
        }
    }
}

impl Drop for Bench {
    /// A hub that outlives its CLI (Cline's) is stopped even when the test
    /// failed before its count of leftovers, which stops it otherwise: it
    /// would run on, detached, after the test binary.
    fn drop(&mut self) {
        let Some(marker) = self.agent.hub() else {
            return;
        };
        for (pid, cmdline) in self.survivors() {
            if cmdline.contains(marker) {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// One run of a host.
pub struct Run {
    agent: Agent,
    /// The host's process.
    pub child: Child,
    /// The fake model's requests (CLIs) or the scripted host's events.
    pub events: Events,
    _fake: Option<Child>,
    log: PathBuf,
}

impl Run {
    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the host runs")
    }

    /// The text of the tool's result as the model got it in its next
    /// request (the scripted hosts print it), within [`AGENT_DEADLINE`].
    pub async fn tool_result(&mut self) -> String {
        let line = self
            .events
            .next_where(AGENT_DEADLINE, |v| v["tool_result"].is_string())
            .await;
        match line {
            Some(line) => line["tool_result"].as_str().unwrap_or_default().to_owned(),
            None => {
                let log = self.log();
                panic!(
                    "{}: no tool result reached the model; it saw {:?}\n{log}",
                    self.agent.name(),
                    self.events.seen(),
                )
            }
        }
    }

    /// Waits for the host to exit by itself.
    pub async fn exit(&mut self) -> ExitStatus {
        match tokio::time::timeout(AGENT_DEADLINE, self.child.wait()).await {
            Ok(status) => status.expect("wait for the host"),
            Err(_) => {
                let log = self.log();
                panic!(
                    "{} did not exit; the model saw {:?}\n{log}",
                    self.agent.name(),
                    self.events.seen(),
                )
            }
        }
    }

    /// What the host printed (standard output for the CLIs, and standard
    /// error).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every event seen, as JSON lines.
    pub fn seen(&mut self) -> &[Value] {
        self.events.seen()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "---- {} output ----\n{}---- end of {} output ----",
                self.agent.name(),
                self.log(),
                self.agent.name()
            );
        }
    }
}
