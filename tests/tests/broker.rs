//! The broker end to end: a private bus, the real `elicitd`, real clients
//! and a scripted front-end.

use std::time::{Duration, Instant};

use elicit_client::ClientSession;
use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, Origin, Request1Proxy, Session1Proxy};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, eventually, within};
use futures_util::StreamExt;
use futures_util::future::join_all;
use serde_json::{Value, json};
use zbus::{MatchRule, MessageStream};

const NAME_FORM: &str = r#"{"message": "Your name?", "requestedSchema": {"type": "object",
  "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}}"#;

async fn session(bus: &PrivateBus, server: &str) -> (zbus::Connection, ClientSession) {
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some(server.into()),
        host: Some("broker-test".into()),
        ..Origin::default()
    };
    let session = ClientSession::open(&conn, &origin).await.expect("open session");
    (conn, session)
}

async fn forms(conn: &zbus::Connection) -> Vec<Value> {
    let broker = Broker1Proxy::new(conn).await.expect("proxy");
    serde_json::from_str(&broker.list_forms().await.expect("list")).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_form_at_a_time_per_session_in_submission_order() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let (conn, mut client) = session(&bus, "serial").await;
    let submissions = (0..50).map(|i| {
        let request = NAME_FORM.replace("Your name?", &format!("Question {i}"));
        let client = &client;
        async move { client.submit(&request, None, None).await.expect("submit") }
    });
    let paths = within("50 concurrent submissions", join_all(submissions)).await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let mut previous = 0u64;
    for _ in 0..50 {
        let shown = frontend.next_show().await;
        let id: u64 = shown.form.parse().expect("numeric id");
        assert!(id > previous, "form {id} shown after {previous}: order broken");
        previous = id;
        let presented = forms(&conn)
            .await
            .iter()
            .filter(|f| f["state"] == "presented")
            .count();
        assert_eq!(presented, 1, "exactly one form of the session is presented");
        let message = shown.request["message"].as_str().expect("message").to_owned();
        frontend
            .answer(&shown, "accept", json!({"name": message}))
            .await
            .expect("answer");
    }
    // Each submission gets the answer to its own question back.
    for (i, path) in paths.iter().enumerate() {
        let outcome = within("an outcome", client.wait(path)).await.expect("outcome");
        assert_eq!(outcome.content, Some(json!({"name": format!("Question {i}")})));
    }
    // Acknowledgements go out without awaiting their reply.
    eventually("every outcome acknowledged", || async {
        forms(&conn).await.is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sessions_are_presented_at_once() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "[broker]\nsessions-per-connection = 100\n").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let conn = bus.connect().await;
    let mut clients = Vec::new();
    for i in 0..100 {
        let client = ClientSession::open(
            &conn,
            &Origin {
                server: Some(format!("s{i}")),
                ..Origin::default()
            },
        )
        .await
        .expect("open");
        let path = client.submit(NAME_FORM, None, None).await.expect("submit");
        clients.push((client, path));
    }
    let mut shown = Vec::new();
    for _ in 0..100 {
        shown.push(frontend.next_show().await);
    }
    let sessions: std::collections::HashSet<&str> = shown.iter().map(|s| s.session.as_str()).collect();
    assert_eq!(sessions.len(), 100, "every session has its form on screen");
    for s in &shown {
        frontend.answer(s, "decline", Value::Null).await.expect("decline");
    }
    for (client, path) in &mut clients {
        assert_eq!(client.wait(path).await.expect("outcome").action, "decline");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_reach_the_owner_only_and_strangers_are_refused() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (_owner_conn, mut owner) = session(&bus, "private").await;
    let form = owner.submit(NAME_FORM, None, None).await.expect("submit");

    let stranger = bus.connect().await;
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface("dev.elicitd.Request1")
        .expect("iface")
        .build();
    let mut snooped = MessageStream::for_match_rule(rule, &stranger, None)
        .await
        .expect("match");
    let stranger_broker = Broker1Proxy::new(&stranger).await.expect("proxy");
    let mut changes = stranger_broker.receive_form_changed().await.expect("subscribe");
    stranger_broker.watch().await.expect("watch");

    // A stranger cannot answer without the token, close, or submit.
    let shown = frontend.next_show().await;
    let wrong = stranger_broker
        .answer(&shown.form, "guess", "accept", r#"{"name":"x"}"#)
        .await;
    assert!(matches!(wrong.map_err(Error::from), Err(Error::AccessDenied(_))));
    let request = Request1Proxy::builder(&stranger)
        .path(form.as_ref())
        .expect("path")
        .build()
        .await
        .expect("proxy");
    assert!(matches!(
        request.close().await.map_err(Error::from),
        Err(Error::AccessDenied(_))
    ));
    let session = Session1Proxy::builder(&stranger)
        .path(owner.path())
        .expect("path")
        .build()
        .await
        .expect("proxy");
    let submitted = session.elicit(NAME_FORM, Default::default()).await;
    assert!(matches!(
        submitted.map_err(Error::from),
        Err(Error::AccessDenied(_))
    ));

    frontend
        .answer(&shown, "accept", json!({"name": "Ann"}))
        .await
        .expect("answer");
    let outcome = owner.wait(&form).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "Ann"})));
    // The daemon emits Response before FormChanged(answered); a stranger
    // that saw the broadcast would have seen the unicast first, had it been
    // sent to it.
    within("the broadcast", async {
        while let Some(change) = changes.next().await {
            if change.args().is_ok_and(|a| a.state() == &"answered") {
                break;
            }
        }
    })
    .await;
    let leaked = tokio::time::timeout(Duration::ZERO, snooped.next()).await;
    assert!(leaked.is_err(), "a stranger received a Response: {leaked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_is_refused_everything() {
    if !elicit_tests::is_root() {
        assert!(
            std::env::var_os("CI").is_none(),
            "acting as another user needs root, which CI must give"
        );
        eprintln!("\n!!! SKIPPED: acting as another user needs root !!!\n");
        return;
    }
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let output = tokio::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(elicit_tests::binary("elicit"))
        .args(["--bus", bus.address(), "list"])
        .output()
        .await
        .expect("setpriv runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("AccessDenied") || stderr.contains("access denied"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_answer_is_refused_and_the_form_stays() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (conn, mut client) = session(&bus, "strict").await;
    let form = client.submit(NAME_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    let refused = frontend
        .answer(&shown, "accept", json!({"name": "", "age": 3}))
        .await;
    let Err(Error::InvalidAnswer(errors)) = refused else {
        panic!("expected InvalidAnswer, got {refused:?}")
    };
    let errors: Vec<elicit_proto::FieldError> = serde_json::from_str(&errors).expect("field errors as JSON");
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["age", "name"]);
    assert_eq!(forms(&conn).await[0]["state"], "presented");
    frontend
        .answer(&shown, "accept", json!({"name": "Bo"}))
        .await
        .expect("corrected");
    assert_eq!(
        client.wait(&form).await.expect("outcome").content,
        Some(json!({"name": "Bo"}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_departed_client_has_its_forms_withdrawn_within_a_second() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (conn, client) = session(&bus, "leaver").await;
    client.submit(NAME_FORM, None, None).await.expect("submit");
    client.submit(NAME_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    let gone = Instant::now();
    drop(client);
    drop(conn);
    let (form, reason) = frontend.next_withdraw().await;
    let took = gone.elapsed();
    assert_eq!(
        (form.as_str(), reason.as_str()),
        (shown.form.as_str(), "client-gone")
    );
    assert!(took < Duration::from_secs(1), "withdrawn after {took:?}");
    let observer = bus.connect().await;
    eventually("the queue to empty", || {
        let observer = observer.clone();
        async move { forms(&observer).await.is_empty() }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_frontend_s_form_goes_to_the_next_within_a_second() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "[frontends]\npreference = [\"first\", \"second\"]\n").await;
    let mut first = TestFrontend::register(&bus, "first", 0).await;
    let mut second = TestFrontend::register(&bus, "second", 0).await;
    let (_conn, mut client) = session(&bus, "resilient").await;
    let form = client.submit(NAME_FORM, None, None).await.expect("submit");
    let shown = first.next_show().await;
    let crashed = Instant::now();
    drop(first);
    let again = second.next_show().await;
    let took = crashed.elapsed();
    assert_eq!(again.form, shown.form);
    assert!(took < Duration::from_secs(1), "re-presented after {took:?}");
    second
        .answer(&again, "accept", json!({"name": "Cy"}))
        .await
        .expect("answer");
    assert_eq!(client.wait(&form).await.expect("outcome").action, "accept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_past_its_deadline_is_cancelled_with_reason_timeout() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (_conn, mut client) = session(&bus, "slow").await;
    let form = client.submit(NAME_FORM, Some(1), None).await.expect("submit");
    let shown = frontend.next_show().await;
    let outcome = within("the timeout's outcome", client.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(
        (outcome.action.as_str(), outcome.reason.as_str()),
        ("cancel", "timeout")
    );
    assert_eq!(frontend.next_withdraw().await, (shown.form, "timeout".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_loses_nothing_and_duplicates_nothing() {
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    // Session A: answered, but the owner has not acknowledged it.
    let (_a_conn, mut a) = session(&bus, "a").await;
    let answered = a.submit(NAME_FORM, None, None).await.expect("submit");
    // Session B: two queued forms.
    let (_b_conn, mut b) = session(&bus, "b").await;
    let first = b.submit(NAME_FORM, None, None).await.expect("submit");
    let second = b
        .submit(&NAME_FORM.replace("Your name?", "Second"), None, None)
        .await
        .expect("submit");
    let mut shown = [frontend.next_show().await, frontend.next_show().await];
    shown.sort_by_key(|s| s.form.parse::<u64>().unwrap_or(0));
    frontend
        .answer(&shown[0], "accept", json!({"name": "before the crash"}))
        .await
        .expect("answer");

    daemon.restart().await;
    let mut frontend = TestFrontend::register(&bus, "script-again", 0).await;

    // A re-attaches by itself and gets its answer exactly once.
    let outcome = within("A's redelivered answer", a.wait(&answered))
        .await
        .expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "before the crash"})));
    // B's forms come back in order, one at a time.
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Your name?");
    frontend
        .answer(&shown, "accept", json!({"name": "one"}))
        .await
        .expect("answer");
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Second");
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("answer");
    assert_eq!(
        b.wait(&first).await.expect("first").content,
        Some(json!({"name": "one"}))
    );
    assert_eq!(b.wait(&second).await.expect("second").action, "decline");

    // Nothing twice: history holds each form once, delivered.
    let observer = bus.connect().await;
    let broker = Broker1Proxy::new(&observer).await.expect("proxy");
    // Acknowledgements go out without awaiting their reply; history is
    // written when each arrives.
    eventually("every outcome in history", || async {
        let text = broker.history(100).await.unwrap_or_default();
        serde_json::from_str::<Vec<Value>>(&text).is_ok_and(|h| h.len() >= 3)
    })
    .await;
    let history: Vec<Value> =
        serde_json::from_str(&broker.history(100).await.expect("history")).expect("JSON");
    let ids: Vec<u64> = history.iter().filter_map(|r| r["form"].as_u64()).collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(ids.len(), 3, "{history:?}");
    assert_eq!(unique.len(), 3);
    assert!(history.iter().all(|r| r["delivered"] == true));
    assert!(forms(&observer).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_limit_refuses_clearly_and_disturbs_nothing_else() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(
        &bus,
        "[broker]\nforms-per-session = 2\nsessions-per-connection = 2\nforms-total = 3\n[limits]\nmax-request-bytes = 400\n",
    )
    .await;
    let conn = bus.connect().await;
    let origin = Origin::default();
    let one = ClientSession::open(&conn, &origin).await.expect("first session");
    let two = ClientSession::open(&conn, &origin).await.expect("second session");
    let third = ClientSession::open(&conn, &origin)
        .await
        .expect_err("a third session is refused");
    assert!(
        matches!(third, Error::LimitExceeded(ref m) if m.contains("sessions-per-connection")),
        "{third}"
    );

    one.submit(NAME_FORM, None, None).await.expect("1/2");
    one.submit(NAME_FORM, None, None).await.expect("2/2");
    let over = one
        .submit(NAME_FORM, None, None)
        .await
        .expect_err("over the session limit");
    assert!(
        matches!(over, Error::LimitExceeded(ref m) if m.contains("forms-per-session")),
        "{over}"
    );
    let big = json!({"message": "x".repeat(500), "requestedSchema": {"type": "object", "properties": {}}});
    let large = two
        .submit(&big.to_string(), None, None)
        .await
        .expect_err("too large");
    assert!(
        matches!(large, Error::InvalidRequest(ref m) if m.contains("request-too-large")),
        "{large}"
    );
    let bad = two
        .submit(r#"{"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}}"#, None, None)
        .await
        .expect_err("invalid");
    assert!(
        matches!(bad, Error::InvalidRequest(ref m) if m.contains("property `a`") && m.contains("nested-object"))
    );
    two.submit(NAME_FORM, None, None).await.expect("total 3/3");
    let total = two
        .submit(NAME_FORM, None, None)
        .await
        .expect_err("over the total");
    assert!(
        matches!(total, Error::LimitExceeded(ref m) if m.contains("forms-total")),
        "{total}"
    );
    // Counts come before any parsing (issue 39): a full broker refuses
    // even a bad request by its count, at no cost.
    let full = two
        .submit(r#"{"message": 1}"#, None, None)
        .await
        .expect_err("full");
    assert!(
        matches!(full, Error::LimitExceeded(ref m) if m.contains("forms-total")),
        "{full}"
    );

    // The three accepted forms are all still there.
    assert_eq!(forms(&conn).await.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_keeps_who_and_which_fields_but_never_the_values() {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (conn, mut client) = session(&bus, "auditor").await;
    let form = client.submit(NAME_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    let secret = "zebra-crossing-4711";
    frontend
        .answer(&shown, "accept", json!({"name": secret}))
        .await
        .expect("answer");
    assert_eq!(
        client.wait(&form).await.expect("outcome").content,
        Some(json!({"name": secret}))
    );
    let broker = Broker1Proxy::new(&conn).await.expect("proxy");
    // History is written when the acknowledgement (not awaited) arrives.
    eventually("the form in history", || async {
        broker.history(10).await.is_ok_and(|h| h != "[]")
    })
    .await;
    let history = broker.history(10).await.expect("history");
    let records: Vec<Value> = serde_json::from_str(&history).expect("JSON");
    assert_eq!(records[0]["fields"], json!(["name"]));
    assert_eq!(records[0]["origin"]["server"], "auditor");
    assert_eq!(records[0]["outcome"], "accept");
    assert_eq!(records[0]["answered_by"], "script");
    assert!(
        !history.contains(secret),
        "history holds an answer value: {history}"
    );
    assert!(!daemon.log().contains(secret), "the log holds an answer value");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicit_ask_and_elicit_answer_work_from_the_command_line() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let schema = bus.dir().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}, "required": ["n"]}"#,
    )
    .expect("schema");
    let ask = tokio::process::Command::new(elicit_tests::binary("elicit"))
        .args([
            "--bus",
            bus.address(),
            "ask",
            "--message",
            "Pick a digit",
            "--schema",
        ])
        .arg(&schema)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("elicit ask");
    let observer = bus.connect().await;
    eventually("the form to be queued", || {
        let observer = observer.clone();
        async move { !forms(&observer).await.is_empty() }
    })
    .await;
    let id = forms(&observer).await[0]["id"].to_string();
    let elicit = |args: Vec<String>| {
        let bus = bus.address().to_owned();
        async move {
            tokio::process::Command::new(elicit_tests::binary("elicit"))
                .arg("--bus")
                .arg(bus)
                .args(args)
                .output()
                .await
                .expect("elicit runs")
        }
    };
    let invalid = elicit(vec![
        "answer".into(),
        id.clone(),
        "--accept".into(),
        r#"{"n": 12}"#.into(),
    ])
    .await;
    assert_eq!(invalid.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("`n`: must be at most 9"));
    let valid = elicit(vec!["answer".into(), id, "--accept".into(), r#"{"n": 7}"#.into()]).await;
    assert!(
        valid.status.success(),
        "{}",
        String::from_utf8_lossy(&valid.stderr)
    );
    let output = within("elicit ask to finish", ask.wait_with_output())
        .await
        .expect("output");
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(printed, json!({"action": "accept", "content": {"n": 7}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_front_end_program_is_started_on_the_first_form() {
    let bus = PrivateBus::start();
    let started = bus.dir().join("started");
    // The "front-end" records that it ran; a real one would register.
    let config = format!(
        "[frontends]\ncommand = [\"sh\", \"-c\", \"echo ran >> '{}'\"]\n",
        started.display()
    );
    let _daemon = Daemon::start(&bus, &config).await;
    assert!(!started.exists(), "nothing is started before a form waits");
    let (_conn, client) = session(&bus, "lonely").await;
    client.submit(NAME_FORM, None, None).await.expect("submit");
    eventually("the front-end program to start", || {
        let started = started.clone();
        async move { started.exists() }
    })
    .await;
    // The form waits for a front-end; it is not lost.
    let observer = bus.connect().await;
    assert_eq!(forms(&observer).await[0]["state"], "queued");
}
