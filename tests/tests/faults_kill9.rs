//! Fault suite: `kill -9` of the daemon with a hundred sessions in flight: nothing is lost
//! and nothing is asked or delivered twice.
//!
//! Its figures print with `cargo test -p elicit-tests --test faults_kill9 -- --nocapture`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use elicit_client::{ClientSession, Outcome};
use elicit_proto::dbus::Origin;
use elicit_tests::faults::*;
use elicit_tests::{Daemon, PrivateBus, TestFrontend, within};
use futures_util::future::join_all;
use serde_json::Value;
use zbus::zvariant::OwnedObjectPath;

/// `kill -9` of the daemon with 100 sessions and 200 forms in every state
/// (queued, presented, answered and acknowledged, answered and not yet
/// acknowledged, answers in flight at the kill); after the restart the
/// clients re-attach by themselves and a new front-end answers what is
/// left. Every form must reach its client exactly once with its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_a_hundred_sessions_in_flight_loses_and_duplicates_nothing() {
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    const SESSIONS: usize = 100;
    const CONNECTIONS: usize = 10;
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "[broker]\nsessions-per-connection = 100\n").await;
    let mut frontend = TestFrontend::register(&bus, "before", 0).await;

    let responses: Responses = Arc::default();
    let mut conns = Vec::new();
    for _ in 0..CONNECTIONS {
        let conn = bus.connect().await;
        record_responses(&conn, responses.clone()).await;
        conns.push(conn);
    }
    let opened = join_all((0..SESSIONS).map(|i| {
        let conn = conns[i % CONNECTIONS].clone();
        async move {
            let origin = Origin {
                server: Some(format!("s{i}")),
                ..Origin::default()
            };
            ClientSession::open(&conn, &origin).await.expect("open")
        }
    }))
    .await;
    // Two forms per session, in order: the second waits behind the first.
    let submitted = join_all(opened.iter().enumerate().map(|(i, session)| async move {
        let mut paths = Vec::new();
        for j in 0..2 {
            let path = session
                .submit(&name_form(&format!("s{i}-f{j}")), None, None)
                .await
                .expect("submit");
            paths.push(path);
        }
        paths
    }))
    .await;
    let mut expected: HashMap<String, Value> = HashMap::new();
    for (i, paths) in submitted.iter().enumerate() {
        for (j, path) in paths.iter().enumerate() {
            expected.insert(path.to_string(), answer_for(&format!("s{i}-f{j}")));
        }
    }
    let total = expected.len();

    // Even sessions wait (and acknowledge) all along; odd ones only after
    // the restart, so that their answers sit unacknowledged across it.
    let wait_all = |mut session: ClientSession, paths: Vec<OwnedObjectPath>| {
        tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for path in paths {
                let outcome = tokio::time::timeout(Duration::from_secs(30), session.wait(&path)).await;
                let outcome = match outcome {
                    Ok(Ok(outcome)) => Ok(outcome),
                    Ok(Err(error)) => Err(error.to_string()),
                    Err(_) => Err("no outcome within 30 s".to_owned()),
                };
                outcomes.push((path.to_string(), outcome));
            }
            outcomes
        })
    };
    let mut waiters = Vec::new();
    let mut idle = Vec::new();
    for (i, (session, paths)) in opened.into_iter().zip(submitted).enumerate() {
        if i % 2 == 0 {
            waiters.push(wait_all(session, paths));
        } else {
            idle.push((session, paths));
        }
    }

    let applied: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let mut heads = Vec::new();
    for _ in 0..SESSIONS {
        heads.push(frontend.next_show().await);
    }
    // 30 answered well before the kill, 30 more racing it.
    for shown in &heads[..30] {
        let message = shown.request["message"].as_str().unwrap_or_default();
        frontend
            .answer(shown, "accept", answer_for(message))
            .await
            .expect("answer");
        *applied.lock().unwrap().entry(shown.form.clone()).or_default() += 1;
    }
    let mut racing = tokio::task::JoinSet::new();
    for shown in heads[30..60].iter().cloned() {
        let broker = frontend.broker();
        racing.spawn(async move {
            let message = shown.request["message"].as_str().unwrap_or_default().to_owned();
            let content = answer_for(&message).to_string();
            let result = broker.answer(&shown.form, &shown.token, "accept", &content).await;
            (shown.form, result.is_ok())
        });
    }
    let mut finished_before_kill = 0;
    while finished_before_kill < 3 {
        let (form, ok) = within("an answer before the kill", racing.join_next())
            .await
            .expect("a racing answer")
            .expect("answer task");
        if ok {
            *applied.lock().unwrap().entry(form).or_default() += 1;
        }
        finished_before_kill += 1;
    }
    daemon.kill9();
    let mut in_flight_failed = 0;
    while let Some(joined) = racing.join_next().await {
        let (form, ok) = joined.expect("answer task");
        if ok {
            *applied.lock().unwrap().entry(form).or_default() += 1;
        } else {
            in_flight_failed += 1;
        }
    }
    let applied_before = applied.lock().unwrap().clone();
    drop(frontend);
    daemon.restart().await;

    // What came back from sled, before anyone answers again.
    let observer = bus.connect().await;
    let restored = list_forms(&observer).await;
    let count = |state: &str| restored.iter().filter(|f| f["state"] == state).count();
    let (restored_answered, restored_queued) = (count("answered"), count("queued"));

    let frontend = TestFrontend::register(&bus, "after", 0).await;
    let answerer = answer_shown(
        frontend,
        |shown| shown.request["message"].as_str().map(answer_for),
        applied.clone(),
    );
    for (session, paths) in idle {
        waiters.push(wait_all(session, paths));
    }
    let mut outcomes: Vec<(String, Result<Outcome, String>)> = Vec::new();
    for waiter in waiters {
        outcomes.extend(waiter.await.expect("waiter"));
    }
    // Forms delivered: wait until the last acknowledgement is retired.
    let mut leftover = Vec::new();
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_secs(10) {
        leftover = list_forms(&observer).await;
        if leftover.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    answerer.abort();

    // Lost: a client without its own answer, an answer the daemon had
    // confirmed but asked for again, a form left behind or missing from
    // history.
    let mut lost = Vec::new();
    let mut seen = HashSet::new();
    for (path, outcome) in &outcomes {
        seen.insert(path.clone());
        match outcome {
            Ok(o) if o.action == "accept" && o.content.as_ref() == expected.get(path) => {}
            other => lost.push(format!("{path}: {other:?}")),
        }
    }
    lost.extend(
        expected
            .keys()
            .filter(|p| !seen.contains(*p))
            .map(|p| format!("{p}: never waited for")),
    );
    let applied = applied.lock().unwrap().clone();
    for (form, n) in &applied {
        if *n > 1 && applied_before.get(form).copied().unwrap_or(0) > 0 {
            lost.push(format!(
                "form {form}: its answer was confirmed before the kill, yet it was asked again"
            ));
        }
    }
    lost.extend(leftover.iter().map(|f| format!("left behind: {f}")));
    let records = history(&observer).await;
    let mut in_history: HashMap<String, usize> = HashMap::new();
    for record in &records {
        *in_history.entry(record["form"].to_string()).or_default() += 1;
        if record["delivered"] != true {
            lost.push(format!("undelivered in history: {record}"));
        }
    }
    for path in expected.keys() {
        if !in_history.contains_key(&form_of(path)) {
            lost.push(format!("{path}: not in history"));
        }
    }

    // Duplicated: two different outcomes sent for one form, an answer
    // applied twice, a form twice in history.
    let responses = responses.lock().unwrap().clone();
    let mut duplicated = Vec::new();
    let mut redelivered = 0;
    for (path, got) in &responses {
        let distinct: HashSet<&(String, String)> = got.iter().collect();
        if distinct.len() > 1 {
            duplicated.push(format!("{path}: different responses {got:?}"));
        }
        redelivered += got.len() - 1;
    }
    for (form, n) in &applied {
        if *n > 1 {
            duplicated.push(format!("form {form}: answered successfully {n} times"));
        }
    }
    for (form, n) in &in_history {
        if *n > 1 {
            duplicated.push(format!("form {form}: {n} times in history"));
        }
    }
    println!(
        "faults: kill -9 with {SESSIONS} sessions, {total} forms: at the kill {} answers confirmed, \
         {in_flight_failed} answers cut off in flight; restored {restored_answered} answered-unacknowledged \
         + {restored_queued} queued; lost {}, duplicated {}; identical Responses redelivered after \
         re-attach (deduplicated by the client): {redelivered}; {:.1} s",
        applied_before.len(),
        lost.len(),
        duplicated.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(lost.is_empty(), "lost answers: {lost:#?}");
    assert!(duplicated.is_empty(), "duplicated answers: {duplicated:#?}");
    assert_eq!(outcomes.len(), total);
}
