//! Policy rules inside the running daemon: verdicts, the built-in secret
//! guard, remembered choices, and a slow rule that stalls nobody else.

use elicit_client::ClientSession;
use elicit_proto::dbus::{Broker1Proxy, Dict, Origin};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, eventually, within};
use serde_json::{Value, json};
use zbus::zvariant::Str;

const CONFIRM: &str = r#"{"message": "Deploy?", "requestedSchema": {"type": "object", "properties": {}}}"#;

async fn start(bus: &PrivateBus, rules: &[(&str, &str)]) -> Daemon {
    let dir = bus.dir().join("rules.d");
    std::fs::create_dir_all(&dir).expect("rules dir");
    for (name, text) in rules {
        std::fs::write(dir.join(name), text).expect("rule file");
    }
    Daemon::start(
        bus,
        &format!("[policy]\nrules-dirs = [{:?}]\n", dir.display().to_string()),
    )
    .await
}

async fn client(bus: &PrivateBus, server: &str) -> ClientSession {
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some(server.into()),
        cwd: Some("/home/me/project".into()),
        ..Origin::default()
    };
    ClientSession::open(&conn, &origin).await.expect("session")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_decide_and_history_names_the_rule() {
    let bus = PrivateBus::start();
    let _daemon = start(
        &bus,
        &[(
            "10-ci.rhai",
            r#"rule("no-ci-bot", |request, origin| { if origin.server == "ci-bot" { return decline("bots get no answers"); } });"#,
        )],
    )
    .await;
    let mut bot = client(&bus, "ci-bot").await;
    let form = bot.submit(CONFIRM, None, None).await.expect("submit");
    let outcome = within("the rule's verdict", bot.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(
        (outcome.action.as_str(), outcome.reason.as_str()),
        ("decline", "bots get no answers")
    );
    assert_eq!(outcome.answered_by, "10-ci.rhai: no-ci-bot");

    // The built-in guard declines a form that asks for a password.
    let mut shop = client(&bus, "shop").await;
    let secret = r#"{"message": "Log in", "requestedSchema": {"type": "object",
        "properties": {"password": {"type": "string", "title": "Password"}}}}"#;
    let form = shop.submit(secret, None, None).await.expect("submit");
    let outcome = within("the secret guard", shop.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "decline");
    assert_eq!(outcome.answered_by, "built-in: secret-guard");

    // History is written when the owner's acknowledgement (sent without
    // awaiting its reply) arrives.
    let wanted = ["10-ci.rhai: no-ci-bot", "built-in: secret-guard"];
    eventually("both rules in history", || async {
        let records = elicit_tests::history(&bus.connect().await).await;
        let by: Vec<&str> = records.iter().filter_map(|r| r["answered_by"].as_str()).collect();
        wanted.iter().all(|w| by.contains(w))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_rule_stalls_no_other_session() {
    let bus = PrivateBus::start();
    let _daemon = start(
        &bus,
        &[(
            "10-slow.rhai",
            r#"rule("spin", |request, origin| { if origin.server == "slow" { let n = 0; loop { n += 1; } } });"#,
        )],
    )
    .await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let slow = client(&bus, "slow").await;
    // Rules run inside the submission: the slow session's call waits for
    // its rule, and the fast session's must not wait with it.
    let slow_submission = tokio::spawn(async move {
        let form = slow.submit(CONFIRM, None, None).await.expect("submit");
        (slow, form)
    });
    let mut fast = client(&bus, "fast").await;
    let fast_form = fast.submit(CONFIRM, None, None).await.expect("submit");
    // The fast session's form is shown and answered while the slow rule
    // spins; the spinning rule then runs out of budget and asks the human.
    let first = frontend.next_show().await;
    assert_eq!(first.server.as_deref(), Some("fast"));
    frontend
        .answer(&first, "accept", json!({}))
        .await
        .expect("answer");
    assert_eq!(fast.wait(&fast_form).await.expect("outcome").action, "accept");
    let second = frontend.next_show().await;
    assert_eq!(
        second.server.as_deref(),
        Some("slow"),
        "a rule that errs falls through to the human"
    );
    frontend
        .answer(&second, "decline", Value::Null)
        .await
        .expect("answer");
    let (mut slow, slow_form) = within("the slow submission", slow_submission)
        .await
        .expect("the submitting task");
    assert_eq!(slow.wait(&slow_form).await.expect("outcome").action, "decline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remembered_choices_answer_later_forms_until_forgotten() {
    let bus = PrivateBus::start();
    let _daemon = start(&bus, &[]).await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let mut deployer = client(&bus, "deployer").await;
    let form = deployer.submit(CONFIRM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    let broker = Broker1Proxy::new(frontend.connection()).await.expect("proxy");
    let mut options = Dict::new();
    options.insert("remember".into(), Str::from("server").into());
    broker
        .answer_with(&shown.form, &shown.token, "accept", "{}", options)
        .await
        .expect("answer and remember");
    assert_eq!(deployer.wait(&form).await.expect("outcome").action, "accept");

    let again = deployer.submit(CONFIRM, None, None).await.expect("submit");
    let outcome = within("the remembered answer", deployer.wait(&again))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "accept");
    assert!(
        outcome.answered_by.starts_with("remembered #"),
        "{}",
        outcome.answered_by
    );
    assert!(frontend.is_idle(), "a remembered form must not be shown");

    let choices: Vec<Value> =
        serde_json::from_str(&broker.list_remembered().await.expect("list")).expect("JSON");
    assert_eq!(choices.len(), 1);
    assert_eq!(choices[0]["server"], "deployer");
    let id = choices[0]["id"].as_u64().expect("id");
    assert!(broker.forget(id).await.expect("forget"));

    let third = deployer.submit(CONFIRM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("answer");
    assert_eq!(deployer.wait(&third).await.expect("outcome").action, "decline");
}

/// zbus matches a signal rule's `path_namespace` by string prefix on the
/// client's side, so a session whose id begins another's ("1" and "10")
/// was handed that session's outcomes too. Nobody read them, and at 256
/// the queue was full and the whole connection stopped: elicit-bench's
/// policy figure hung at its 257th form this way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_id_begins_another_s_hears_none_of_its_outcomes() {
    let bus = PrivateBus::start();
    let _daemon = start(
        &bus,
        &[(
            "10-bot.rhai",
            r#"rule("no-bot", |request, origin| { if origin.server == "bot" { return decline("no"); } });"#,
        )],
    )
    .await;
    let conn = bus.connect().await;
    let origin = |server: &str| Origin {
        server: Some(server.into()),
        ..Origin::default()
    };
    let idle = ClientSession::open(&conn, &origin("idle"))
        .await
        .expect("session");
    let idle_id = idle.path().rsplit('/').next().unwrap_or_default().to_owned();
    // Ids count up, so one of the next sessions' ids begins with it.
    let mut bot = loop {
        let next = ClientSession::open(&conn, &origin("bot")).await.expect("session");
        let id = next.path().rsplit('/').next().unwrap_or_default();
        if id.starts_with(&idle_id) && id != idle_id {
            break next;
        }
        next.close().await.expect("close");
    };
    for n in 0..300 {
        // A stopped connection stops the submission's reply too.
        let form = within(&format!("submission {n}"), bot.submit(CONFIRM, None, None))
            .await
            .expect("submit");
        let outcome = within(&format!("the outcome of form {n}"), bot.wait(&form))
            .await
            .expect("outcome");
        assert_eq!(outcome.action, "decline");
    }
    idle.close()
        .await
        .expect("the idle session's connection still works");
}
