//! The secret guard inside the running daemon: a user rule that throws on
//! the server's chosen input does not let a password form through, and
//! only `secret-guard = false` in the configuration switches it off.

use elicit_client::ClientSession;
use elicit_proto::dbus::{Broker1Proxy, Origin};
use elicit_tests::{Daemon, PrivateBus, eventually, within};
use serde_json::{Value, json};

/// A password form whose message trips the user's rule below.
fn password_form() -> String {
    json!({
        "message": "trip",
        "requestedSchema": {"type": "object", "properties": {
            "value": {"type": "string", "title": "Pass\u{200b}word"}
        }}
    })
    .to_string()
}

async fn start(bus: &PrivateBus, extra_config: &str) -> Daemon {
    let dir = bus.dir().join("rules.d");
    std::fs::create_dir_all(&dir).expect("rules dir");
    std::fs::write(
        dir.join("00-throws.rhai"),
        r#"rule("throws", |request, origin| { if request.message == "trip" { throw "tripped"; } });"#,
    )
    .expect("rule file");
    let config = format!(
        "[policy]\nrules-dirs = [{:?}]\n{extra_config}",
        dir.display().to_string()
    );
    Daemon::start(bus, &config).await
}

async fn client(bus: &PrivateBus) -> ClientSession {
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some("hostile".into()),
        ..Origin::default()
    };
    ClientSession::open(&conn, &origin).await.expect("session")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throwing_rule_does_not_let_a_password_form_through() {
    let bus = PrivateBus::start();
    let _daemon = start(&bus, "").await;
    let mut client = client(&bus).await;
    let form = client.submit(&password_form(), None, None).await.expect("submit");
    let outcome = within("the guard's decline", client.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "decline");
    let conn = bus.connect().await;
    let history: Vec<Value> = serde_json::from_str(
        &Broker1Proxy::new(&conn)
            .await
            .expect("proxy")
            .history(10)
            .await
            .expect("history"),
    )
    .expect("JSON");
    assert_eq!(history[0]["answered_by"], "built-in: secret-guard", "{history:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configuration_alone_switches_the_guard_off() {
    let bus = PrivateBus::start();
    let _daemon = start(&bus, "secret-guard = false\n").await;
    let client = client(&bus).await;
    client.submit(&password_form(), None, None).await.expect("submit");
    // The rule fails, so the form waits for a human.
    let conn = bus.connect().await;
    let broker = Broker1Proxy::new(&conn).await.expect("proxy");
    eventually("the form queued for a human", || async {
        let forms: Vec<Value> =
            serde_json::from_str(&broker.list_forms().await.unwrap_or_default()).unwrap_or_default();
        forms.len() == 1
    })
    .await;
}
