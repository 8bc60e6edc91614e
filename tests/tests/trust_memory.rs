//! Issue 39, breaks 1–4: a form costs what its size says. Pattern-heavy
//! forms keep the daemon's memory near its text; a restart with 64 of
//! them stored answers within a second; refused requests cost no parsing,
//! so a flood of them does not hold up another connection's `Pending`
//! read; and `elicit list` lists 540 forms of 250 KB each, which no single
//! D-Bus reply could carry.
//!
//! Figures print with
//! `cargo test -p elicit-tests --test trust_memory -- --nocapture --test-threads 1`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, Dict, Session1Proxy};
use elicit_tests::faults::{SERIAL, rss_kib};
use elicit_tests::{Daemon, PrivateBus, binary, within};
use serde_json::{Value, json};

/// The session bus's own limits (Debian's `session.conf`), so that the
/// bus lets through what a desktop's would.
const SESSION_LIMITS: &str = r#"<limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">1000000000</limit>"#;

/// A form of 64 text fields, field `i` with `pattern(i)`.
fn pattern_form(message: &str, pattern: impl Fn(usize) -> String) -> String {
    let properties: serde_json::Map<String, Value> = (0..64)
        .map(|i| (format!("f{i}"), json!({"type": "string", "pattern": pattern(i)})))
        .collect();
    json!({"message": message, "requestedSchema": {"type": "object", "properties": properties}}).to_string()
}

/// The break's form: 64 × `.{750}`, 3 KB of text that compiled to 67 MiB.
fn megabyte_patterns(n: usize) -> String {
    pattern_form(&format!("heavy {n}"), |_| ".{750}".to_owned())
}

/// The largest patterns still allowed, 64 different ones: some 200 KB
/// each compiled, 13 MB a form if every compiled program were kept.
fn largest_allowed_patterns(n: usize) -> String {
    pattern_form(&format!("allowed {n}"), |i| format!("^.{{1,{}}}$", 87 + i))
}

/// Opens a session on `conn`.
async fn open(conn: &zbus::Connection) -> Session1Proxy<'static> {
    let broker = Broker1Proxy::new(conn).await.expect("broker proxy");
    let (path, _token) = broker.open_session(Dict::new()).await.expect("open a session");
    Session1Proxy::builder(conn)
        .path(path)
        .expect("session path")
        .build()
        .await
        .expect("session proxy")
}

async fn elicit(session: &Session1Proxy<'_>, request: &str) -> Result<(), Error> {
    session
        .elicit(request, Dict::new())
        .await
        .map(|_| ())
        .map_err(Error::from)
}

fn mib(kib: u64) -> u64 {
    kib / 1024
}

/// Break 1: 8 forms of 64 `.{750}` patterns took the daemon from 15 to
/// 550 MiB; now such a pattern is refused (its program is 1 MB), and 32
/// forms of 64 of the largest patterns allowed leave it near its start,
/// since a form keeps sources and the compiled programs share a 4 MiB
/// cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pattern_heavy_forms_cost_what_their_text_says() {
    let _serial = SERIAL.lock().await;
    const AFTER_8_MIB: u64 = 140;
    const AFTER_32_MIB: u64 = 150;
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let pid = daemon.pid().expect("running");
    let start = rss_kib(pid);
    let conn = bus.connect().await;
    let heavy = open(&conn).await;
    let allowed = open(&conn).await;
    let mut refused = 0;
    for n in 1..=32 {
        match elicit(&heavy, &megabyte_patterns(n)).await {
            Ok(()) => {}
            Err(Error::InvalidRequest(why)) if why.contains("too large") => refused += 1,
            Err(other) => panic!("form {n}: {other}"),
        }
        elicit(&allowed, &largest_allowed_patterns(n))
            .await
            .unwrap_or_else(|e| panic!("allowed form {n}: {e}"));
        if n == 8 || n == 32 {
            let rss = rss_kib(pid);
            eprintln!(
                "figure: daemon RSS {} MiB after {n} forms of 64 `.{{750}}` ({refused} refused) and {n} of 64 \
                 `^.{{1,87..150}}$` (started at {} MiB)",
                mib(rss),
                mib(start)
            );
            let bound = if n == 8 { AFTER_8_MIB } else { AFTER_32_MIB };
            assert!(
                mib(rss) < bound,
                "RSS {} MiB after {n} forms, over {bound}",
                mib(rss)
            );
        }
    }
}

/// Break 2: after `kill -9` with 32 such forms stored, the daemon compiled
/// every pattern again before it answered (11.5 s). Now restore compiles
/// nothing: with 64 forms of 64 of the largest patterns stored, a
/// `Pending` read answers within a second of the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_64_pattern_heavy_forms_answers_within_a_second() {
    let _serial = SERIAL.lock().await;
    const FORMS: usize = 64;
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let conn = bus.connect().await;
    let session = open(&conn).await;
    for n in 0..FORMS {
        elicit(&session, &largest_allowed_patterns(n))
            .await
            .unwrap_or_else(|e| panic!("form {n}: {e}"));
    }
    drop(session);
    let started = Instant::now();
    daemon.restart().await;
    let observer = bus.connect().await;
    let broker = Broker1Proxy::new(&observer).await.expect("broker proxy");
    let pending = within("Pending after the restart", broker.pending())
        .await
        .expect("Pending");
    let answered = started.elapsed();
    eprintln!("figure: Pending answered {answered:?} after kill -9 and restart with {FORMS} forms stored");
    // The client's connection is still on the bus: its session and forms
    // wait for it.
    assert_eq!(pending as usize, FORMS, "every form restored");
    assert!(answered < Duration::from_secs(1), "{answered:?} to answer");
}

/// Break 3: every pattern was compiled before the session quota refused a
/// request, on a tokio worker; four connections sending such requests
/// held a `Pending` read up to 1.3 s. Now the quota refuses before any
/// parsing, and what is parsed runs off the workers, so the read stays
/// quick while the flood goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refused_requests_does_not_hold_up_another_connection() {
    let _serial = SERIAL.lock().await;
    const FLOODERS: usize = 4;
    const IN_FLIGHT: usize = 4;
    const FLOOD: Duration = Duration::from_secs(6);
    const WORST_READ: Duration = Duration::from_millis(750);
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "[broker]\nforms-per-session = 1\n").await;
    let heavy = Arc::new(megabyte_patterns(0));
    let allowed = Arc::new(largest_allowed_patterns(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut flood = tokio::task::JoinSet::new();
    for f in 0..FLOODERS {
        let conn = bus.connect().await;
        let session = Arc::new(open(&conn).await);
        // Its one form fills the session: every later one is refused.
        elicit(
            &session,
            "{\"message\":\"fill\",\"requestedSchema\":{\"type\":\"object\"}}",
        )
        .await
        .expect("the first form");
        for c in 0..IN_FLIGHT {
            let (session, stop) = (session.clone(), stop.clone());
            // The break's form and one of the largest allowed: the quota
            // refuses both, and needs to parse neither.
            let request = if (f + c) % 2 == 0 {
                heavy.clone()
            } else {
                allowed.clone()
            };
            flood.spawn(async move {
                let mut refused = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match elicit(&session, &request).await {
                        Err(Error::LimitExceeded(_)) => refused += 1,
                        other => panic!("the flood's form was not refused by the quota: {other:?}"),
                    }
                }
                refused
            });
        }
    }
    let observer = bus.connect().await;
    let broker = Broker1Proxy::new(&observer).await.expect("broker proxy");
    let flood_started = Instant::now();
    let mut worst = Duration::ZERO;
    let mut reads = 0;
    while flood_started.elapsed() < FLOOD {
        let started = Instant::now();
        let pending = within("Pending during the flood", broker.pending())
            .await
            .expect("Pending");
        worst = worst.max(started.elapsed());
        reads += 1;
        assert_eq!(pending as usize, FLOODERS);
        let started = Instant::now();
        let listed = within("ListForms during the flood", broker.list_forms())
            .await
            .expect("ListForms");
        worst = worst.max(started.elapsed());
        assert!(listed.starts_with('['));
    }
    stop.store(true, Ordering::Relaxed);
    let mut refused = 0;
    while let Some(done) = within("the flood to end", flood.join_next()).await {
        refused += done.expect("a flooding task");
    }
    eprintln!(
        "figure: worst Pending/ListForms read {worst:?} over {reads} reads while {FLOODERS} connections \
         had {refused} requests refused in {FLOOD:?}"
    );
    assert!(refused > 0, "the flood ran");
    assert!(worst < WORST_READ, "a read took {worst:?} during the flood");
}

/// Break 4: 540 forms whose 64 field names are about 3.9 KB each made the
/// `ListForms` reply larger than D-Bus's 128 MiB limit, and `elicit list`
/// failed. It lists them in pages now, table and `--json` alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicit_list_lists_540_large_forms() {
    let _serial = SERIAL.lock().await;
    const FORMS: usize = 540;
    const PER_SESSION: usize = 60;
    let bus = PrivateBus::start_with(SESSION_LIMITS);
    let _daemon = Daemon::start(
        &bus,
        "[broker]\nforms-total-bytes = 268435456\n[store]\nsync = \"process-crash\"\n[policy]\nenabled = false\n",
    )
    .await;
    let conn = bus.connect().await;
    let mut session = open(&conn).await;
    let started = Instant::now();
    for n in 0..FORMS {
        if n > 0 && n % PER_SESSION == 0 {
            session = open(&conn).await;
        }
        let properties: serde_json::Map<String, Value> = (0..64)
            .map(|i| {
                (
                    format!("{n:03}-{i:02}-{}", "n".repeat(3900)),
                    json!({"type": "string"}),
                )
            })
            .collect();
        let request = json!({"message": format!("large {n}"),
            "requestedSchema": {"type": "object", "properties": properties}})
        .to_string();
        elicit(&session, &request)
            .await
            .unwrap_or_else(|e| panic!("form {n}: {e}"));
    }
    eprintln!("{FORMS} large forms queued in {:?}", started.elapsed());

    let started = Instant::now();
    let listed = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "list", "--json"])
        .output()
        .await
        .expect("elicit list --json");
    let json_time = started.elapsed();
    assert!(
        listed.status.success(),
        "elicit list --json: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let forms: Vec<Value> = serde_json::from_slice(&listed.stdout).expect("one JSON array");
    assert_eq!(forms.len(), FORMS);
    assert!(
        forms
            .iter()
            .all(|f| f["fields"].as_array().is_some_and(|f| f.len() == 64))
    );
    let ids: Vec<u64> = forms.iter().filter_map(|f| f["id"].as_u64()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "in id order, each once");

    let started = Instant::now();
    let table = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "list"])
        .output()
        .await
        .expect("elicit list");
    let table_time = started.elapsed();
    assert!(
        table.status.success(),
        "elicit list: {}",
        String::from_utf8_lossy(&table.stderr)
    );
    let text = String::from_utf8_lossy(&table.stdout);
    assert_eq!(text.lines().count(), FORMS, "one line a form");
    eprintln!(
        "figure: elicit list --json with {FORMS} large forms ({} MB of JSON) took {json_time:?}; \
         the table {table_time:?}",
        listed.stdout.len() / 1_000_000
    );
}
