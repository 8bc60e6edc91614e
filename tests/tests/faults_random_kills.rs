//! Fault suite: Front-ends and clients killed at random points disturb no one else.
//!
//! Its figures print with `cargo test -p elicit-tests --test faults_random_kills -- --nocapture`.

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use elicit_client::ClientSession;
use elicit_proto::dbus::{Broker1Proxy, Origin};
use elicit_tests::faults::*;
use elicit_tests::{Daemon, Event, PrivateBus, TestFrontend, binary, eventually, within};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// What happens to one `elicit ask` process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Killed right after it starts (before or while it submits).
    KilledAtOnce,
    /// Killed while a front-end shows its form (mid-wait).
    KilledWhileShown,
    /// Killed right after its form is answered (racing its acknowledgement).
    KilledAfterAnswer,
    /// Left alone: it must print its answer.
    Survives,
}

/// Front-ends (a real `elicit-tui --plain` process and scripted ones) and
/// clients (real `elicit ask` processes) killed at random points of a
/// seeded plan, while steady clients keep asking. A form whose front-end
/// dies goes to the next one; a client that dies mid-wait has its forms
/// withdrawn (`client-gone`); the steady clients get every answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn front_ends_and_clients_killed_at_random_disturb_no_one_else() {
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    let seed = seed();
    println!("faults: random kills with seed {seed} (FAULTS_SEED={seed} repeats it)");
    let mut rng = Rng(seed);
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "[frontends]\npreference = [\"tui\", \"script\"]\n").await;
    let observer = bus.connect().await;
    let identity = daemon_identity(&observer).await;
    let broker = Broker1Proxy::builder(&observer)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy");
    let mut changes = broker.receive_form_changed().await.expect("subscribe");
    broker.watch().await.expect("watch");
    let presented_to_tui: Arc<Mutex<HashSet<String>>> = Arc::default();
    let watcher = {
        let presented_to_tui = presented_to_tui.clone();
        tokio::spawn(async move {
            while let Some(change) = changes.next().await {
                if let Ok(args) = change.args()
                    && *args.state() == "presented"
                    && *args.reason() == "tui"
                {
                    presented_to_tui.lock().unwrap().insert(args.form().to_string());
                }
            }
        })
    };

    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    // A real front-end process, preferred to the scripted one.
    let mut tui = tokio::process::Command::new(binary("elicit-tui"))
        .args(["--bus", bus.address(), "--plain"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit-tui starts");
    eventually("elicit-tui to register", || {
        let broker = broker.clone();
        async move { broker.frontends().await.unwrap_or(0) == 2 }
    })
    .await;

    // Steady clients: five sessions, three forms each. The TUI dies at a
    // random point: once it shows the head forms of the first few.
    let shown_before_kill = 1 + rng.below(5) as usize;
    let mut tui_killed = None;
    let mut steady = Vec::new();
    let mut steady_expected = Vec::new();
    for i in 0..5 {
        if i == shown_before_kill {
            eventually("elicit-tui to show forms", || {
                let n = presented_to_tui.lock().unwrap().len();
                async move { n >= shown_before_kill }
            })
            .await;
            tui.start_kill().expect("kill elicit-tui");
            tui_killed = Some(tui.wait().await.expect("elicit-tui reaped"));
        }
        let conn = bus.connect().await;
        let origin = Origin {
            server: Some(format!("steady{i}")),
            ..Origin::default()
        };
        let mut session = ClientSession::open(&conn, &origin).await.expect("open");
        let mut paths = Vec::new();
        for j in 0..3 {
            let message = format!("steady-{i}-{j}");
            let path = session
                .submit(&name_form(&message), None, None)
                .await
                .expect("submit");
            steady_expected.push((path.to_string(), answer_for(&message)));
            paths.push(path);
        }
        steady.push(tokio::spawn(async move {
            let _conn = conn;
            let mut outcomes = Vec::new();
            for path in paths {
                outcomes.push((path.to_string(), session.wait(&path).await));
            }
            // Closing confirms the last acknowledgement (see `ClientSession`).
            session.close().await.expect("close");
            outcomes
        }));
    }
    if tui_killed.is_none() {
        eventually("elicit-tui to show forms", || {
            let n = presented_to_tui.lock().unwrap().len();
            async move { n >= shown_before_kill }
        })
        .await;
        tui.start_kill().expect("kill elicit-tui");
        tui_killed = Some(tui.wait().await.expect("elicit-tui reaped"));
    }

    tui_killed.expect("elicit-tui was killed");
    // Every form it showed must be shown again, to the scripted one.
    let mut must_reappear: HashSet<String> = presented_to_tui.lock().unwrap().clone();
    let tui_forms = must_reappear.len();

    // Clients that die.
    let schema = bus.dir().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}"#,
    )
    .expect("schema");
    let fates = [
        Fate::KilledAtOnce,
        Fate::KilledWhileShown,
        Fate::KilledAfterAnswer,
        Fate::Survives,
    ];
    let mut victims = Vec::new();
    for k in 0..10 {
        let fate = fates[rng.below(fates.len() as u64) as usize];
        let mut child = tokio::process::Command::new(binary("elicit"))
            .args(["--bus", bus.address(), "ask", "--message"])
            .arg(format!("victim-{k}"))
            .arg("--schema")
            .arg(&schema)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("elicit ask");
        if fate == Fate::KilledAtOnce {
            child.start_kill().expect("kill");
        }
        victims.push((fate, Some(child)));
    }
    let mut victim_outputs: HashMap<usize, std::process::Output> = HashMap::new();

    let mut expect_withdraw: HashSet<String> = HashSet::new();
    let mut withdrawn_client_gone = 0;
    let mut frontend_crashes = 0;
    let mut answered = 0;
    within("the random-kill scenario to settle", async {
        loop {
            for (k, (_, child)) in victims.iter_mut().enumerate() {
                if let Some(c) = child
                    && let Ok(Some(_)) = c.try_wait()
                    && let Some(c) = child.take()
                {
                    victim_outputs.insert(k, c.wait_with_output().await.expect("output"));
                }
            }
            let victims_done = victims.iter().all(|(_, c)| c.is_none());
            if victims_done
                && steady.iter().all(|s| s.is_finished())
                && expect_withdraw.is_empty()
                && must_reappear.is_empty()
            {
                break;
            }
            let Ok(event) = tokio::time::timeout(Duration::from_millis(50), frontend.next()).await else {
                continue;
            };
            match event {
                Event::Withdraw(form, reason) => {
                    if expect_withdraw.remove(&form) {
                        assert_eq!(reason, "client-gone", "form {form}");
                        withdrawn_client_gone += 1;
                    }
                }
                Event::Show(shown) => {
                    must_reappear.remove(&shown.form);
                    let message = shown.request["message"].as_str().unwrap_or_default().to_owned();
                    if let Some(k) = message.strip_prefix("victim-") {
                        let k: usize = k.parse().expect("victim number");
                        let (fate, child) = &mut victims[k];
                        match (*fate, child.as_mut()) {
                            (Fate::KilledWhileShown, Some(c)) => {
                                c.start_kill().expect("kill");
                                expect_withdraw.insert(shown.form);
                            }
                            (Fate::KilledAfterAnswer, Some(c)) => {
                                frontend
                                    .answer(&shown, "accept", answer_for(&message))
                                    .await
                                    .expect("answer");
                                c.start_kill().expect("kill");
                            }
                            (Fate::Survives, _) => {
                                frontend
                                    .answer(&shown, "accept", answer_for(&message))
                                    .await
                                    .expect("answer");
                            }
                            // Shown after its client died: withdrawn soon.
                            _ => {
                                expect_withdraw.insert(shown.form);
                            }
                        }
                    } else if expect_withdraw.is_empty() && frontend_crashes < 4 && rng.chance(30) {
                        // The front-end dies with the form on screen (a
                        // pending withdrawal would be re-routed, so only
                        // when none is pending).
                        frontend_crashes += 1;
                        must_reappear.insert(shown.form);
                        let old =
                            std::mem::replace(&mut frontend, TestFrontend::register(&bus, "script", 0).await);
                        drop(old);
                    } else {
                        frontend
                            .answer(&shown, "accept", answer_for(&message))
                            .await
                            .expect("answer");
                        answered += 1;
                    }
                }
            }
        }
    })
    .await;
    watcher.abort();

    // The steady clients got every answer, in order.
    for task in steady {
        for (path, outcome) in task.await.expect("steady client") {
            let outcome = outcome.unwrap_or_else(|e| panic!("{path}: {e}"));
            let wanted = steady_expected.iter().find(|(p, _)| *p == path).map(|(_, v)| v);
            assert_eq!(outcome.content.as_ref(), wanted, "{path}");
        }
    }
    // Survivors printed their own answer; the rest were killed or, having
    // got their answer first, printed it.
    for (k, (fate, _)) in victims.iter().enumerate() {
        let output = &victim_outputs[&k];
        let expected = json!({"action": "accept", "content": answer_for(&format!("victim-{k}"))});
        if *fate == Fate::Survives || output.status.success() {
            let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
            assert_eq!(printed, expected, "victim {k} ({fate:?})");
        }
    }
    eventually("the queue to empty", || {
        let observer = observer.clone();
        async move { list_forms(&observer).await.is_empty() }
    })
    .await;
    // The last acknowledgements write history after the queue empties
    // (an answer's file is erased first): wait for all 15.
    let delivered_steady = |records: &[Value]| {
        records
            .iter()
            .filter(|r| {
                r["origin"]["server"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("steady"))
            })
            .filter(|r| r["delivered"] == true)
            .count()
    };
    eventually("every steady form in history", || {
        let observer = observer.clone();
        async move { delivered_steady(&history(&observer).await) >= 15 }
    })
    .await;
    let records = history(&observer).await;
    let mut ids = HashSet::new();
    for record in &records {
        assert!(
            ids.insert(record["form"].to_string()),
            "twice in history: {record}"
        );
    }
    assert_eq!(delivered_steady(&records), 15);
    assert_eq!(
        broker.frontends().await.expect("frontends"),
        1,
        "dead front-ends are forgotten"
    );
    assert_eq!(
        daemon_identity(&observer).await,
        identity,
        "the daemon never restarted"
    );
    let count = |f: Fate| victims.iter().filter(|(v, _)| *v == f).count();
    println!(
        "faults: random kills (seed {seed}): elicit-tui killed after showing {tui_forms} forms (all shown again), \
         {frontend_crashes} scripted front-ends dropped mid-form (forms shown again), elicit ask killed at once {}, \
         while shown {} ({withdrawn_client_gone} withdrawals with client-gone), right after the answer {}, \
         left alone {}; {answered} steady answers; {:.1} s",
        count(Fate::KilledAtOnce),
        count(Fate::KilledWhileShown),
        count(Fate::KilledAfterAnswer),
        count(Fate::Survives),
        started.elapsed().as_secs_f64()
    );
}
