//! Streamable HTTP: a host speaking HTTP to a server directly, against a
//! stdio host going through `elicit proxy --url` to the same server, in
//! the same run. The server is tests/peers/python/bulk_server.py --http
//! (standard library, JSON responses, keep-alive): the figures are about
//! what the proxy adds, not about an SDK.

use std::process::Stdio;
use std::time::Instant;

use elicit_tests::{Daemon, PrivateBus, binary, within};
use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::figure::{Compare, Figure, Row, time};
use crate::proxy::{BATCH, BULK_BYTES, BULK_LINES, Host, bulk_round, command, python};

/// A host that speaks Streamable HTTP itself: one keep-alive connection,
/// the session id from `initialize`.
struct Direct {
    http: reqwest::Client,
    url: String,
    session: String,
    next_id: u64,
}

impl Direct {
    async fn connect(url: &str) -> Direct {
        let http = elicit_remote::bridge::http_client().expect("an HTTP client");
        let mut direct = Direct {
            http,
            url: url.to_owned(),
            session: String::new(),
            next_id: 1,
        };
        let response = direct
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "elicit-bench", "version": "1"}}}),
            )
            .await;
        direct.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        direct
    }

    async fn post(&self, message: Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(message.to_string())
            .send()
            .await
            .expect("POST")
    }

    /// One `tools/call` of `bulk`, its whole body read; its length.
    async fn call(&self, id: u64, bytes: usize) -> usize {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bulk", "arguments": {"bytes": bytes}}});
        self.post(message).await.bytes().await.expect("a body").len()
    }
}

/// The bulk server over HTTP and its address.
async fn server() -> (Child, String) {
    let mut line = python("bulk_server.py");
    line.push("--http".into());
    let mut child = command(&line)
        .stdout(Stdio::piped())
        .spawn()
        .expect("bulk_server.py --http");
    let stdout = child.stdout.take().expect("stdout");
    let first = within("the bulk server's address", async {
        BufReader::new(stdout).lines().next_line().await
    })
    .await
    .expect("read")
    .expect("a line");
    let url = first
        .strip_prefix("listening on ")
        .expect("an address")
        .to_owned();
    (child, url)
}

/// Runs the HTTP section.
pub async fn rows(bus: &PrivateBus, iterations: usize) -> Vec<Row> {
    let _daemon = Daemon::start(bus, "").await;
    let (_server, url) = server().await;
    let mut direct = Direct::connect(&url).await;
    let mut through = Host::spawn(&[
        binary("elicit").display().to_string(),
        "--bus".into(),
        bus.address().into(),
        "proxy".into(),
        "--url".into(),
        url.clone(),
    ]);
    through.initialize().await;
    let mut rows = round_trip(&mut direct, &mut through, iterations).await;
    rows.extend(bulk(&mut direct, &mut through, (iterations / 20).max(5)).await);
    rows
}

/// A small `tools/call` (100 bytes), direct and through the proxy, in
/// interleaved batches.
async fn round_trip(direct: &mut Direct, through: &mut Host, iterations: usize) -> Vec<Row> {
    eprintln!("elicit-bench: http: tools/call round trips");
    let mut direct_samples = Vec::new();
    let mut proxy_samples = Vec::new();
    let params = json!({"name": "bulk", "arguments": {"bytes": 100}});
    for _ in 0..iterations.div_ceil(BATCH).max(2) {
        let batch = time("", BATCH, async || {
            direct.next_id += 1;
            assert!(direct.call(direct.next_id, 100).await >= 100);
        })
        .await;
        direct_samples.extend(batch.samples);
        let batch = time("", BATCH, async || {
            let response = through.call("tools/call", params.clone()).await;
            assert!(response.get("result").is_some(), "bulk failed: {response}");
        })
        .await;
        proxy_samples.extend(batch.samples);
    }
    let direct = Figure::new("HTTP tools/call, direct (reqwest host)", direct_samples);
    let through = Figure::new("HTTP tools/call, through elicit proxy --url", proxy_samples);
    let floor = direct.p50();
    let added = through.p50().saturating_sub(floor);
    vec![
        Row::Timed(direct, Compare::Floor),
        Row::latency(through, "direct HTTP", floor, None),
        Row::Value {
            name: "HTTP tools/call: added at p50 by elicit proxy --url".into(),
            unit: "ms",
            value: added.as_secs_f64() * 1000.0,
            floor: None,
            goal: "no goal set".into(),
        },
    ]
}

/// 10 MB of results: 100 concurrent POSTs by the direct host, 100 lines
/// written at once through the proxy (which posts them concurrently).
async fn bulk(direct: &mut Direct, through: &mut Host, rounds: usize) -> Vec<Row> {
    eprintln!("elicit-bench: http: bulk results");
    let mut direct_samples = Vec::new();
    let mut proxy_samples = Vec::new();
    for round in 0..=rounds {
        let started = Instant::now();
        let base = direct.next_id;
        direct.next_id += BULK_LINES as u64;
        let lengths = join_all((0..BULK_LINES as u64).map(|i| direct.call(base + i, BULK_BYTES))).await;
        let direct_elapsed = started.elapsed();
        assert!(lengths.iter().sum::<usize>() >= BULK_LINES * BULK_BYTES);
        let proxy_elapsed = bulk_round(through).await;
        if round > 0 {
            direct_samples.push(direct_elapsed);
            proxy_samples.push(proxy_elapsed);
        }
    }
    let direct = Figure::new("HTTP 10 MB of results, direct", direct_samples);
    let through = Figure::new("HTTP 10 MB of results, through elicit proxy --url", proxy_samples);
    let megabytes = (BULK_LINES * BULK_BYTES) as f64 / 1e6;
    let rate = |f: &Figure| megabytes / f.p50().as_secs_f64().max(f64::EPSILON);
    let (direct_rate, proxy_rate) = (rate(&direct), rate(&through));
    let floor = direct.p50();
    vec![
        Row::Timed(direct, Compare::Floor),
        Row::latency(through, "direct HTTP", floor, None),
        Row::Value {
            name: "HTTP proxy throughput (100 × 100 kB results)".into(),
            unit: "MB/s",
            value: proxy_rate,
            floor: Some(("direct HTTP".into(), direct_rate)),
            goal: "no goal set".into(),
        },
    ]
}
