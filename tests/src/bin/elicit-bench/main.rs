//! `elicit-bench`: elicitd's latencies as ratios against floors measured in
//! the same run on the same machine (shared, noisy machines make absolute
//! figures meaningless).
//!
//! Build everything in release first, then run it from the same folder:
//! `cargo build --release --workspace --bins && target/release/elicit-bench`.

use std::time::{Duration, Instant};

use elicit_proto::dbus::{BUS_NAME, Origin};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, binary};
use elicitd::client::ClientSession;
use futures_util::future::join_all;
use serde_json::json;

const CONFIRM: &str = r#"{"message": "Go?", "requestedSchema": {"type": "object", "properties": {}}}"#;

/// Latencies of one figure.
struct Figure {
    name: &'static str,
    samples: Vec<Duration>,
}

impl Figure {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted.get(index).copied().unwrap_or_default()
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn time(name: &'static str, n: usize, mut run: impl AsyncFnMut()) -> Figure {
    // A few untimed rounds warm caches and connections.
    for _ in 0..(n / 10).max(3) {
        run().await;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        run().await;
        samples.push(started.elapsed());
    }
    Figure { name, samples }
}

/// Answers every form it is shown, at once and concurrently: a scripted
/// human with many hands, so that the broker, not the answerer, is measured.
async fn auto_answer(mut frontend: TestFrontend) {
    let broker = frontend.broker();
    loop {
        let shown = frontend.next_show().await;
        let broker = broker.clone();
        tokio::spawn(async move {
            let content = if shown.request.get("url").is_some() {
                ""
            } else {
                "{}"
            };
            let _ = broker.answer(&shown.form, &shown.token, "accept", content).await;
        });
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let bus = PrivateBus::start();
    let rules = bus.dir().join("rules.d");
    std::fs::create_dir_all(&rules).expect("rules dir");
    std::fs::write(
        rules.join("10-bench.rhai"),
        r#"rule("bench", |request, origin| { if origin.server == "bench-policy" { return decline("bench"); } });"#,
    )
    .expect("rule");
    let _daemon = Daemon::start(
        &bus,
        &format!("[policy]\nrules-dirs = [{:?}]\n", rules.display().to_string()),
    )
    .await;
    let conn = bus.connect().await;

    // Floor 1: a plain D-Bus method round trip between two processes.
    let ping = zbus::Proxy::new(
        &conn,
        BUS_NAME,
        "/dev/elicitd/Broker",
        "org.freedesktop.DBus.Peer",
    )
    .await
    .expect("proxy");
    let round_trip = time("D-Bus round trip (Peer.Ping)", iterations * 2, async || {
        let _: () = ping.call("Ping", &()).await.expect("ping");
    })
    .await;

    // Floor 2: one sled insert and flush.
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sled::open(dir.path()).expect("sled");
    let mut key = 0u64;
    let flush = time("sled insert + flush", iterations, async || {
        key += 1;
        db.insert(key.to_be_bytes(), &[7u8; 256][..]).expect("insert");
        db.flush().expect("flush");
    })
    .await;

    // Brokered: submit → present → answer → response, one session.
    let frontend = TestFrontend::register(&bus, "bench", 0).await;
    let answering = tokio::spawn(auto_answer(frontend));
    let origin = Origin {
        server: Some("bench".into()),
        ..Origin::default()
    };
    let mut session = ClientSession::open(&conn, &origin).await.expect("session");
    let brokered = time("brokered, 1 session", iterations, async || {
        let form = session.submit(CONFIRM, None, None).await.expect("submit");
        session.wait(&form).await.expect("outcome");
    })
    .await;

    // Brokered with 64 sessions in flight at once.
    let mut sessions = Vec::new();
    for i in 0..64 {
        let origin = Origin {
            server: Some(format!("bench-{i}")),
            ..Origin::default()
        };
        let conn = bus.connect().await;
        sessions.push(ClientSession::open(&conn, &origin).await.expect("session"));
    }
    let rounds = (iterations / 64).max(4);
    let mut concurrent = Vec::new();
    for _ in 0..rounds {
        let results = join_all(sessions.iter_mut().map(|session| async move {
            let started = Instant::now();
            let form = session.submit(CONFIRM, None, None).await.expect("submit");
            session.wait(&form).await.expect("outcome");
            started.elapsed()
        }))
        .await;
        concurrent.extend(results);
    }
    let concurrent = Figure {
        name: "brokered, 64 sessions at once",
        samples: concurrent,
    };

    // `elicit ask` as a script runs it, against starting `elicit` at all.
    let elicit = binary("elicit");
    let spawn = time("process floor: elicit --version", 40, async || {
        let out = tokio::process::Command::new(&elicit)
            .arg("--version")
            .output()
            .await;
        assert!(out.expect("elicit runs").status.success());
    })
    .await;
    let schema = bus.dir().join("confirm.json");
    std::fs::write(&schema, r#"{"type": "object", "properties": {}}"#).expect("schema");
    let ask = time("elicit ask, scripted front-end", 40, async || {
        let out = tokio::process::Command::new(&elicit)
            .args(["--bus", bus.address(), "ask", "--message", "Go?", "--schema"])
            .arg(&schema)
            .output()
            .await
            .expect("elicit ask runs");
        assert!(out.status.success());
    })
    .await;
    answering.abort();

    // Decided by a rule: no front-end involved.
    let origin = Origin {
        server: Some("bench-policy".into()),
        ..Origin::default()
    };
    let mut ruled = ClientSession::open(&conn, &origin).await.expect("session");
    let policy = time("policy-decided", iterations, async || {
        let form = ruled.submit(CONFIRM, None, None).await.expect("submit");
        ruled.wait(&form).await.expect("outcome");
    })
    .await;

    let rt = round_trip.percentile(0.5);
    let fl = flush.percentile(0.5);
    let rows: [(&Figure, Option<(&str, Duration)>); 7] = [
        (&round_trip, None),
        (&flush, None),
        (&brokered, Some(("2 RT + 1 flush", rt * 2 + fl))),
        (&concurrent, Some(("2 RT + 1 flush", rt * 2 + fl))),
        (&policy, Some(("1 RT + 1 flush", rt + fl))),
        (&spawn, None),
        (&ask, Some(("elicit --version", spawn.percentile(0.5)))),
    ];
    println!(
        "{:<34} {:>9} {:>9}   {:<18} {:>9} {:>7}",
        "figure", "p50 ms", "p99 ms", "floor", "floor ms", "ratio"
    );
    let mut report = Vec::new();
    for (figure, floor) in rows {
        let (p50, p99) = (figure.percentile(0.5), figure.percentile(0.99));
        let (floor_name, floor_ms, ratio) = match floor {
            Some((name, floor)) => (name, ms(floor), ms(p50) / ms(floor).max(f64::EPSILON)),
            None => ("(floor)", ms(p50), 1.0),
        };
        println!(
            "{:<34} {:>9.3} {:>9.3}   {:<18} {:>9.3} {:>7.2}",
            figure.name,
            ms(p50),
            ms(p99),
            floor_name,
            floor_ms,
            ratio
        );
        report.push(json!({
            "figure": figure.name, "samples": figure.samples.len(),
            "p50_ms": ms(p50), "p99_ms": ms(p99),
            "floor": floor_name, "floor_ms": floor_ms, "ratio_p50": ratio,
        }));
    }
    let path = std::env::var("ELICIT_BENCH_JSON").unwrap_or_else(|_| "elicit-bench.json".into());
    if let Err(error) = std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap_or_default()) {
        eprintln!("elicit-bench: cannot write {path}: {error}");
    } else {
        println!("\nwritten to {path}");
    }
}
