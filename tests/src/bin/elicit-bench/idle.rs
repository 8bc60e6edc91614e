//! Idle: the memory and wake-ups of a daemon with nothing to do (with and
//! without a front-end registered), what is left once it has exited idle,
//! how long the first call after an idle exit takes (D-Bus activation), and
//! how long a restart takes with 10 000 forms stored.

use std::sync::Arc;
use std::time::{Duration, Instant};

use elicit_proto::dbus::{BROKER_PATH, BUS_NAME};
use elicit_tests::home::{Home, owner_pid};
use elicit_tests::procs::exited;
use elicit_tests::{Daemon, PrivateBus, TestFrontend};
use futures_util::future::join_all;
use tokio::sync::Semaphore;

use crate::broker::{CONFIRM, session};
use crate::figure::{Compare, Figure, Row, verdict};
use crate::procfs;

/// How long wake-ups are counted.
const WINDOW: Duration = Duration::from_secs(10);
/// Restarts timed per figure.
const RESTARTS: usize = 5;
/// Idle exits and reactivations timed.
const REACTIVATIONS: usize = 5;

/// Runs the idle section.
pub async fn rows(bus: &PrivateBus) -> Vec<Row> {
    // The rules directory is the bench's own: the standard ones (or their
    // nearest existing ancestors, watched so that a new rules directory is
    // noticed) would count other programs' file activity as the daemon's.
    let rules = bus.dir().join("rules.d");
    std::fs::create_dir_all(&rules).expect("rules dir");
    let mut daemon = Daemon::start_with(
        bus,
        &format!(
            "[broker]\nsessions-per-connection = 1000\nsessions-per-uid = 100000\nforms-per-session = 16\ndefault-timeout-secs = 0\n\
             [policy]\nrules-dirs = [{:?}]\n",
            rules.display().to_string()
        ),
        &[("ELICITD_LOG", Some("info"))],
        // A running idle daemon is what this measures: it must not leave.
        &["--no-exit-on-idle"],
    )
    .await;
    let pid = daemon.pid().expect("daemon pid");
    // Let start-up work (the rules watcher, the first flush) finish: this
    // measures the steady state, so waiting here is the point.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let bare = wakeups(pid, bus).await;
    let (sled_wakeups, own_wakeups, bus_wakeups) = (bare.sled, bare.own, bare.bus);
    let daemon_wakeups = sled_wakeups + own_wakeups;
    // Whether a front-end registered (it waits for forms) adds any.
    let frontend = TestFrontend::register(bus, "bench", 0).await;
    let with_frontend = wakeups(pid, bus).await;
    drop(frontend);
    let idle_rss = procfs::rss_mib(pid);
    let file_rss = procfs::file_rss_mib(pid);
    let bus_rss = procfs::rss_mib(bus.pid());

    let empty = restarts("restart, empty store", &mut daemon).await;

    // 1 000 sessions × 10 forms, their clients still connected.
    let mut connections = Vec::new();
    for _ in 0..16 {
        connections.push(bus.connect().await);
    }
    let gate = Arc::new(Semaphore::new(64));
    let mut sessions = Vec::new();
    for i in 0..1000 {
        sessions.push(session(&connections[i % connections.len()], &format!("idle-{i}")).await);
    }
    join_all((0..10).flat_map(|_| sessions.iter()).map(|s| {
        let gate = gate.clone();
        async move {
            let _permit = gate.acquire().await.expect("semaphore");
            s.submit(CONFIRM, None, None).await.expect("submit")
        }
    }))
    .await;
    let full = restarts("restart, 10 000 forms stored", &mut daemon).await;
    drop(daemon);
    let (reactivated, running, stayed) = reactivations().await;
    let running_p50 = running.p50();
    let full_p50 = full.p50();
    let empty_p50 = empty.p50();

    vec![
        Row::Value {
            name: "idle daemon RSS".into(),
            unit: "MB",
            value: idle_rss,
            floor: Some(("dbus-daemon RSS".into(), bus_rss)),
            goal: verdict(idle_rss <= 12.0, "≤ 12 MB"),
        },
        Row::Value {
            name: "of which file-backed (binary, libraries)".into(),
            unit: "MB",
            value: file_rss,
            floor: Some(("idle daemon RSS".into(), idle_rss)),
            goal: String::new(),
        },
        Row::Value {
            name: "idle daemon wake-ups over 10 s".into(),
            unit: "/s",
            value: daemon_wakeups,
            floor: Some(("idle dbus-daemon wake-ups".into(), bus_wakeups)),
            goal: verdict(daemon_wakeups == 0.0, "0 /s"),
        },
        Row::Value {
            name: "the same, a front-end registered".into(),
            unit: "/s",
            value: with_frontend.sled + with_frontend.own,
            floor: Some(("idle daemon wake-ups".into(), daemon_wakeups)),
            goal: String::new(),
        },
        Row::Value {
            name: "of which sled 0.34's I/O pool threads".into(),
            unit: "/s",
            value: sled_wakeups,
            floor: Some(("idle daemon wake-ups".into(), daemon_wakeups)),
            goal: String::new(),
        },
        Row::Value {
            name: "of which elicitd's own threads".into(),
            unit: "/s",
            value: own_wakeups,
            floor: Some(("idle daemon wake-ups".into(), daemon_wakeups)),
            goal: verdict(own_wakeups == 0.0, "0 /s"),
        },
        Row::Value {
            // Each with a front-end registered and an idle period of 1 s,
            // looked at 10 s into it.
            name: format!("daemons left after an idle exit (of {REACTIVATIONS})"),
            unit: "",
            value: stayed as f64,
            floor: None,
            goal: verdict(stayed == 0, "0 (an exited daemon wakes nobody)"),
        },
        Row::Timed(running, Compare::Floor),
        Row::latency(reactivated, "a call to a running daemon", running_p50, None),
        Row::Timed(empty, Compare::Floor),
        Row::latency(full, "restart, empty store", empty_p50, None),
        Row::Value {
            name: "restart with 10 000 forms, p50".into(),
            unit: "ms",
            value: full_p50.as_secs_f64() * 1000.0,
            floor: Some(("restart, empty store".into(), empty_p50.as_secs_f64() * 1000.0)),
            goal: verdict(full_p50 <= Duration::from_secs(1), "≤ 1 s"),
        },
    ]
}

/// Times `RESTARTS` restarts: from the kill to the new process owning the
/// bus name (restoring happens before it takes the name).
async fn restarts(name: &str, daemon: &mut Daemon) -> Figure {
    let mut samples = Vec::new();
    for _ in 0..RESTARTS {
        let started = Instant::now();
        daemon.restart().await;
        samples.push(started.elapsed());
    }
    Figure::new(name, samples)
}

/// Context switches per second over [`WINDOW`]: sled's I/O pool, the
/// daemon's own threads, and the bus daemon.
struct Wakeups {
    sled: f64,
    own: f64,
    bus: f64,
}

async fn wakeups(pid: u32, bus: &PrivateBus) -> Wakeups {
    // sled 0.34 keeps a pool of seven I/O threads that each wait with a
    // one-second timeout, forever; they are counted apart from the daemon's
    // own threads, since no setting of sled 0.34 turns them off.
    let sled = |name: &str| name.starts_with("sled-io");
    let own = |name: &str| !name.starts_with("sled-io");
    let (sled_before, own_before, bus_before) = (
        procfs::context_switches_of(pid, sled),
        procfs::context_switches_of(pid, own),
        procfs::context_switches(bus.pid()),
    );
    tokio::time::sleep(WINDOW).await;
    let per_second = |after: u64, before: u64| after.saturating_sub(before) as f64 / WINDOW.as_secs_f64();
    Wakeups {
        sled: per_second(procfs::context_switches_of(pid, sled), sled_before),
        own: per_second(procfs::context_switches_of(pid, own), own_before),
        bus: per_second(procfs::context_switches(bus.pid()), bus_before),
    }
}

/// `Get(Broker1, Version)`: the cheapest call that reaches the daemon, and
/// starts it by activation when nobody owns the name.
async fn version(conn: &zbus::Connection) -> Duration {
    let started = Instant::now();
    conn.call_method(
        Some(BUS_NAME),
        BROKER_PATH,
        Some("org.freedesktop.DBus.Properties"),
        "Get",
        &("dev.elicitd.Broker1", "Version"),
    )
    .await
    .expect("Version");
    started.elapsed()
}

/// The first call after an idle exit (D-Bus activation: the process
/// starts, opens sled, restores, takes the name, replies), against the
/// same call to a running daemon. The daemon leaves after a second idle,
/// a front-end registered all along, as on a desktop.
/// Also returns how many daemons had not exited 10 s into their idle
/// second.
async fn reactivations() -> (Figure, Figure, usize) {
    let home = Home::with_config("[broker]\nexit-on-idle-secs = 1\n");
    let bus = home.session();
    let conn = bus.connect().await;
    version(&conn).await;
    let _frontend = TestFrontend::register(&bus, "bench", 0).await;
    let mut running = Vec::new();
    for _ in 0..100 {
        running.push(version(&conn).await);
    }
    let mut first = Vec::new();
    let mut stayed = 0;
    for _ in 0..REACTIVATIONS {
        let pid = owner_pid(&bus).await.expect("the daemon runs");
        // Its idle second passes: waiting for the exit is the point.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !exited(pid) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if !exited(pid) {
            stayed += 1;
            let _ = std::process::Command::new("kill").arg(pid.to_string()).status();
            while !exited(pid) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        first.push(version(&conn).await);
    }
    (
        Figure::new("first call after an idle exit (activation)", first),
        Figure::new("a call to a running daemon", running),
        stayed,
    )
}
