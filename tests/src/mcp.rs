//! A host's end of MCP over stdio, and the real peers of `tests/peers`.
//!
//! The host side is the test writing JSON-RPC lines, so that a test sees
//! exactly the bytes a host would get.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::{Daemon, PrivateBus, TestFrontend, binary, within};

/// The 2025 era the tests speak.
pub const V2025: &str = "2025-11-25";
/// The 2026 era.
pub const V2026: &str = "2026-07-28";

/// A peer is not installed: under `CI` the test fails naming it;
/// elsewhere it says loudly that it skipped.
pub fn missing<T>(what: &str) -> Option<T> {
    if std::env::var_os("CI").is_some() {
        panic!("{what} is missing: run tests/peers/INSTALL.sh");
    }
    eprintln!("\n!!! SKIPPED: {what} is not installed; run tests/peers/INSTALL.sh !!!\n");
    None
}

/// `tests/peers`.
pub fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// `NODE …/server-everything/dist/index.js stdio`, NODE being the pinned
/// Node 22 ([`crate::node::node`]), when installed.
pub fn everything() -> Option<Vec<String>> {
    let script = peers().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !script.exists() {
        return missing("@modelcontextprotocol/server-everything (npm)");
    }
    let node = crate::node::node()?;
    Some(vec![
        node.display().to_string(),
        script.display().to_string(),
        "stdio".into(),
    ])
}

/// `env PORT=PORT node …/server-everything/dist/index.js streamableHttp`:
/// server-everything over Streamable HTTP at `http://127.0.0.1:PORT/mcp`
/// (it takes its port from `PORT` only, listens on every interface, and
/// cannot report a port it was given as 0: pick one with
/// [`crate::http::free_port`]).
pub fn everything_http(port: u16) -> Option<Vec<String>> {
    let mut command = everything()?;
    command.pop();
    command.push("streamableHttp".into());
    command.splice(0..0, ["env".to_owned(), format!("PORT={port}")]);
    Some(command)
}

/// `node22 …/conformance/dist/index.js`: the conformance suite's command,
/// to which `client …` or `server …` is added.
pub fn conformance() -> Option<Vec<String>> {
    let script = peers().join("node/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if !script.exists() {
        return missing("@modelcontextprotocol/conformance (npm)");
    }
    Some(vec![
        crate::node::node()?.display().to_string(),
        script.display().to_string(),
    ])
}

/// A Python script of tests/peers/python, when the `mcp` package is there.
pub fn python(script: &str) -> Option<Vec<String>> {
    if !peers().join("python/site/mcp").exists() {
        return missing("the Python `mcp` package");
    }
    Some(vec![
        "python3".into(),
        peers().join("python").join(script).display().to_string(),
    ])
}

/// The scripted server needs only Python's standard library.
pub fn fake(extra: &[&str]) -> Vec<String> {
    let mut command = vec![
        "python3".to_owned(),
        peers().join("python/fake_server.py").display().to_string(),
    ];
    command.extend(extra.iter().map(|s| s.to_string()));
    command
}

/// A host's view of a process speaking MCP on stdio.
pub struct Host {
    /// The process.
    pub child: Child,
    /// Its input, until closed.
    pub stdin: Option<ChildStdin>,
    /// Its output, by line.
    pub lines: Lines<BufReader<ChildStdout>>,
}

impl Host {
    /// `elicit --bus BUS proxy FLAGS -- COMMAND`.
    pub fn proxy(bus: &str, flags: &[&str], command: &[String]) -> Host {
        let mut cmd = Command::new(binary("elicit"));
        cmd.arg("--bus")
            .arg(bus)
            .arg("proxy")
            .args(flags)
            .arg("--")
            .args(command);
        Host::spawn(cmd)
    }

    /// The server alone, as a host without the proxy sees it.
    pub fn direct(command: &[String]) -> Host {
        let mut cmd = Command::new(&command[0]);
        cmd.args(&command[1..]);
        Host::spawn(cmd)
    }

    /// Starts `cmd` with piped stdin and stdout, the Python peers on its
    /// path.
    pub fn spawn(cmd: Command) -> Host {
        Host::spawn_with_stderr(cmd, Stdio::inherit())
    }

    /// [`Host::spawn`], its standard error going to `stderr` (a file the
    /// test reads afterwards, say).
    pub fn spawn_with_stderr(mut cmd: Command, stderr: impl Into<Stdio>) -> Host {
        cmd.env("PYTHONPATH", peers().join("python/site"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("start the process");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        Host {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// Writes one line as it is.
    pub async fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// Writes one JSON-RPC message.
    pub async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next line, raw.
    pub async fn recv_raw(&mut self) -> String {
        within("a line from the server side", self.lines.next_line())
            .await
            .expect("read")
            .expect("the proxy closed its output")
    }

    /// The next line, parsed.
    pub async fn recv(&mut self) -> Value {
        let line = self.recv_raw().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Reads until the response to `id`, returning it and what came before.
    pub async fn response(&mut self, id: Value) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// Sends a request and waits for its response.
    pub async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(json!(id)).await.0
    }

    /// The 2025 handshake with `capabilities`.
    pub async fn initialize(&mut self, capabilities: Value) -> Value {
        let result = self
            .call(
                0,
                "initialize",
                json!({"protocolVersion": V2025, "capabilities": capabilities,
                       "clientInfo": {"name": "proxy-test-host", "version": "9.9"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        result
    }

    /// Closes the process's input, as a host that goes away does.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the process to exit; its exit code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        within("the proxy to exit", self.child.wait())
            .await
            .expect("wait")
            .code()
    }
}

/// `_meta` of a 2026-07-28 request that declares no capability at all.
pub fn meta2026(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-host", "version": "1"},
    });
    if let (Some(m), Some(e)) = (meta.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    meta
}

/// The names in a `tools/list` result.
pub fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The text items of a tool result, joined by newlines.
pub fn text_of(response: &Value) -> String {
    response["result"]["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Calls the Python peers' `book` tool as request `id`, accepts the form
/// it asks with `seat` and `count`, and checks that the server booked them:
/// one brokered elicitation there and back.
pub async fn book_through(host: &mut Host, frontend: &mut TestFrontend, id: i64, seat: &str, count: u32) {
    host.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "book", "arguments": {}}}))
        .await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"seat": seat, "count": count}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(id)).await;
    let booked = format!("booked {count} x {seat}");
    assert!(
        text_of(&result).contains(&booked),
        "the answer reached the server: {result}"
    );
}

/// The Python host of tests/peers/python/host.py.
pub struct PyHost {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl PyHost {
    /// `host.py ARGS`, its own environment being this test's plus `env`.
    pub fn start(args: &[String], env: &[(&str, &Path)]) -> PyHost {
        let mut child = Command::new("python3")
            .arg(peers().join("python/host.py"))
            .args(args)
            .env("PYTHONPATH", peers().join("python/site"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 starts");
        let stdout = child.stdout.take().expect("stdout");
        PyHost {
            child,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// The next event of `kind`, skipping others; the events skipped too.
    pub async fn event(&mut self, kind: &str) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let line = within(&format!("the host's {kind} event"), self.lines.next_line())
                .await
                .expect("read")
                .unwrap_or_else(|| panic!("the host ended before its {kind} event"));
            let event: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if event["event"] == kind {
                return (event, before);
            }
            before.push(event);
        }
    }

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the host runs")
    }
}

/// A private bus with the real daemon and a scripted front-end, for a
/// proxy to reach.
pub async fn system() -> (PrivateBus, Daemon, TestFrontend) {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let frontend = TestFrontend::register(&bus, "script", 0).await;
    (bus, daemon, frontend)
}
