//! Scale: 1 000 sessions with 10 forms each queued — how fast they
//! enqueue, how much memory the daemon takes, and whether presenting the
//! next form slows down as the queue grows.

use std::sync::Arc;
use std::time::Instant;

use elicit_proto::dbus::BUS_NAME;
use elicit_tests::{Daemon, PrivateBus, TestFrontend};
use futures_util::future::join_all;
use tokio::sync::Semaphore;

use crate::broker::{CONFIRM, session};
use crate::figure::{Compare, Figure, Row, verdict};
use crate::procfs;

const SESSIONS: usize = 1000;
const FORMS: usize = 10;
/// Submissions in flight at once: many agents, but not all at one instant.
const IN_FLIGHT: usize = 64;

/// Runs the scale section.
pub async fn rows(bus: &PrivateBus) -> Vec<Row> {
    let daemon = Daemon::start_with_env(
        bus,
        "[broker]\nsessions-per-connection = 1000\nsessions-per-uid = 100000\nforms-per-session = 16\ndefault-timeout-secs = 0\n",
        &[("ELICITD_LOG", Some("info"))],
    )
    .await;
    let pid = daemon.pid().expect("daemon pid");
    let idle_rss = procfs::rss_mib(pid);

    // The floor: the same number of no-op calls, as many in flight at once.
    let conn = bus.connect().await;
    let ping = zbus::Proxy::new(
        &conn,
        BUS_NAME,
        "/dev/elicitd/Broker",
        "org.freedesktop.DBus.Peer",
    )
    .await
    .expect("proxy");
    let gate = Arc::new(Semaphore::new(IN_FLIGHT));
    let started = Instant::now();
    join_all((0..SESSIONS * FORMS).map(|_| {
        let (ping, gate) = (ping.clone(), gate.clone());
        async move {
            let _permit = gate.acquire().await.expect("semaphore");
            let _: () = ping.call("Ping", &()).await.expect("ping");
        }
    }))
    .await;
    let ping_rate = (SESSIONS * FORMS) as f64 / started.elapsed().as_secs_f64();

    // Sessions spread over 16 connections, as a few busy agents would.
    let mut connections = Vec::new();
    for _ in 0..16 {
        connections.push(bus.connect().await);
    }
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        sessions.push(session(&connections[i % connections.len()], &format!("scale-{i}")).await);
    }
    let sessions: Vec<_> = sessions
        .into_iter()
        .map(|s| Arc::new(tokio::sync::Mutex::new(s)))
        .collect();
    let started = Instant::now();
    let submitted = join_all((0..FORMS).flat_map(|_| sessions.iter()).map(|s| {
        let (s, gate) = (s.clone(), gate.clone());
        async move {
            let _permit = gate.acquire().await.expect("semaphore");
            s.lock().await.submit(CONFIRM, None, None).await.expect("submit")
        }
    }))
    .await;
    let enqueue_rate = submitted.len() as f64 / started.elapsed().as_secs_f64();
    let queued_rss = procfs::rss_mib(pid);

    // Every client waits for its forms, as agents would, so that answered
    // forms are acknowledged and leave the daemon.
    let mut forms_of: Vec<Vec<_>> = vec![Vec::new(); SESSIONS];
    for (i, form) in submitted.into_iter().enumerate() {
        forms_of[i % SESSIONS].push(form);
    }
    let clients = tokio::spawn(join_all(sessions.iter().cloned().zip(forms_of).map(
        |(s, forms)| async move {
            let mut s = s.lock().await;
            for form in forms {
                s.wait(&form).await.expect("outcome");
            }
        },
    )));

    // A front-end arrives; it answers one form at a time and times how
    // long the broker takes to present that session's next form.
    let mut frontend = TestFrontend::register(bus, "scale", 0).await;
    let broker = frontend.broker();
    let mut shown = std::collections::VecDeque::new();
    for _ in 0..SESSIONS {
        shown.push_back(frontend.next_show().await);
    }
    let mut next_form = Vec::new();
    let mut remaining = SESSIONS * FORMS;
    while let Some(form) = shown.pop_front() {
        let answered = Instant::now();
        broker
            .answer(&form.form, &form.token, "accept", "{}")
            .await
            .expect("answer");
        remaining -= 1;
        if remaining >= SESSIONS {
            // Every session still has a form behind this one.
            let next = frontend.next_show().await;
            next_form.push((remaining, answered.elapsed()));
            shown.push_back(next);
        }
    }
    clients.await.expect("clients");
    let peak_rss = procfs::peak_rss_mib(pid);
    let sample = 500.min(next_form.len() / 2);
    let at_start = Figure::new(
        "present next form, 10 000 queued",
        next_form[..sample].iter().map(|(_, d)| *d).collect(),
    );
    let at_end = Figure::new(
        "present next form, ~1 000 queued",
        next_form[next_form.len() - sample..]
            .iter()
            .map(|(_, d)| *d)
            .collect(),
    );
    let start_p50 = at_start.p50();
    drop(daemon);
    vec![
        Row::Value {
            name: "enqueue 1000 sessions × 10 forms".into(),
            unit: "/s",
            value: enqueue_rate,
            floor: Some(("no-op calls, 64 in flight".into(), ping_rate)),
            goal: String::new(),
        },
        Row::Value {
            name: "daemon RSS with 10 000 forms queued".into(),
            unit: "MB",
            value: queued_rss,
            floor: Some(("daemon RSS, empty".into(), idle_rss)),
            goal: verdict(queued_rss.max(peak_rss) <= 48.0, "≤ 48 MB"),
        },
        Row::Value {
            name: "daemon peak RSS over the scale run".into(),
            unit: "MB",
            value: peak_rss,
            floor: Some(("daemon RSS, empty".into(), idle_rss)),
            goal: verdict(peak_rss <= 48.0, "≤ 48 MB"),
        },
        Row::Timed(at_start, Compare::Floor),
        Row::latency(at_end, "10 000 queued", start_p50, Some(1.5)),
    ]
}
