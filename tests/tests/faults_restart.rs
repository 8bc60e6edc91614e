//! Fault suite: Crashes between two steps: an acknowledgement cut off by a crash is sent
//! again after the restart, and a submission outlives a daemon that dies
//! before replying.
//!
//! Its figures print with `cargo test -p elicit-tests --test faults_restart -- --nocapture`.

use std::time::Duration;

use elicit_client::ClientSession;
use elicit_proto::dbus::{BUS_NAME, Dict, Origin};
use elicit_tests::faults::*;
use elicit_tests::{Daemon, PrivateBus, TestFrontend, eventually, within};
use serde_json::{Value, json};
use zbus::zvariant::OwnedObjectPath;

/// The one form of the scripted broker below.
const FAKE_FORM: &str = "/dev/elicitd/session/1/form/1";
const FAKE_CONTENT: &str = r#"{"name":"given before the crash"}"#;

/// A scripted broker: just enough of `Broker1`, `Session1` and `Request1`
/// for a client to wait on one form; its `Acknowledge` can hang, so that
/// the test kills it with the acknowledgement in flight, deterministically.
struct FakeBroker;

#[zbus::interface(name = "dev.elicitd.Broker1")]
impl FakeBroker {
    fn open_session(&self, _origin: Dict) -> (OwnedObjectPath, String) {
        (
            OwnedObjectPath::try_from("/dev/elicitd/session/1").expect("path"),
            "token".into(),
        )
    }

    fn resume_session(&self, _token: &str) -> OwnedObjectPath {
        OwnedObjectPath::try_from("/dev/elicitd/session/1").expect("path")
    }

    /// It issued the token, so it can prove it knows it.
    fn prove_session(
        &self,
        #[zbus(connection)] conn: &zbus::Connection,
        session: &str,
        nonce: Vec<u8>,
    ) -> (Vec<u8>, Vec<u8>) {
        let me = conn.unique_name().expect("a name").to_string();
        let proof = elicit_proto::trust::proof(
            "token",
            elicit_proto::trust::Role::BrokerToClient,
            session,
            &me,
            &nonce,
        );
        (proof, elicit_proto::trust::nonce())
    }

    fn resume_proven(&self, _session: &str, _proof: Vec<u8>) -> OwnedObjectPath {
        OwnedObjectPath::try_from("/dev/elicitd/session/1").expect("path")
    }
}

struct FakeSession;

#[zbus::interface(name = "dev.elicitd.Session1")]
impl FakeSession {
    async fn redeliver(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) {
        let owner = header.sender().map(|s| s.to_string()).unwrap_or_default();
        send_fake_response(conn, &owner).await;
    }

    fn close(&self) {}
}

struct FakeRequest {
    acks: tokio::sync::mpsc::UnboundedSender<()>,
    hang: bool,
}

#[zbus::interface(name = "dev.elicitd.Request1")]
impl FakeRequest {
    async fn acknowledge(&self) {
        let _ = self.acks.send(());
        if self.hang {
            std::future::pending::<()>().await;
        }
    }
}

async fn send_fake_response(conn: &zbus::Connection, owner: &str) {
    conn.emit_signal(
        Some(owner),
        FAKE_FORM,
        "dev.elicitd.Request1",
        "Response",
        &("accept", FAKE_CONTENT, Dict::new()),
    )
    .await
    .expect("emit Response");
}

async fn fake_broker(
    bus: &PrivateBus,
    acks: tokio::sync::mpsc::UnboundedSender<()>,
    hang: bool,
) -> zbus::Connection {
    zbus::connection::Builder::address(bus.address())
        .expect("address")
        .serve_at(elicit_proto::dbus::BROKER_PATH, FakeBroker)
        .expect("broker")
        .serve_at("/dev/elicitd/session/1", FakeSession)
        .expect("session")
        .serve_at(FAKE_FORM, FakeRequest { acks, hang })
        .expect("request")
        .name(BUS_NAME)
        .expect("name")
        .build()
        .await
        .expect("the scripted broker")
}

/// Regression: the daemon dying while a client's `Acknowledge` is in
/// flight made `wait` fail, and the proxy then answered the server
/// "decline": the user's answer was lost (found by the kill -9 test). The
/// client now waits for the daemon, re-attaches and acknowledges again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledgement_cut_off_by_a_crash_is_sent_again_after_the_restart() {
    let _serial = SERIAL.lock().await;
    let bus = PrivateBus::start();
    let (acks, mut acked_first) = tokio::sync::mpsc::unbounded_channel();
    let first = fake_broker(&bus, acks, true).await;
    let conn = bus.connect().await;
    let mut client = ClientSession::open(&conn, &Origin::default())
        .await
        .expect("open");
    let owner = conn.unique_name().expect("a name").to_string();
    send_fake_response(&first, &owner).await;
    let form = OwnedObjectPath::try_from(FAKE_FORM).expect("path");
    let waiting = tokio::spawn(async move {
        let outcome = client.wait(&form).await;
        (client, outcome)
    });
    within("the first acknowledgement", acked_first.recv()).await;
    // The daemon dies with the acknowledgement unanswered.
    first.close().await.expect("close");
    let (acks, mut acked_again) = tokio::sync::mpsc::unbounded_channel();
    let _second = fake_broker(&bus, acks, false).await;
    let (client, outcome) = within("the outcome across the crash", waiting)
        .await
        .expect("join");
    let outcome = outcome.expect("wait succeeds across the crash");
    assert_eq!(outcome.action, "accept");
    assert_eq!(
        outcome.content,
        Some(serde_json::from_str::<Value>(FAKE_CONTENT).expect("JSON"))
    );
    // The restarted daemon learns that the answer arrived (by the time
    // the session closes at the latest), so it does not keep it.
    client.close().await.expect("close");
    within("the acknowledgement to the restarted daemon", acked_again.recv()).await;
}

/// A daemon that dies while a submission waits in its queue (stopped, then
/// `kill -9`): the client gets `NoReply`, waits for the daemon to return
/// and submits again under the same key, and the form is asked exactly
/// once. Before, the proxy took the lost reply for "no broker" and
/// answered decline for a form the user could still see (found by a
/// full-suite run: `python_answer_survives_a_daemon_restart_mid_form`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_outlives_a_daemon_that_dies_before_replying() {
    let _serial = SERIAL.lock().await;
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some("restarting".into()),
        ..Origin::default()
    };
    let mut session = ClientSession::open(&conn, &origin).await.expect("session");
    let pid = daemon.pid().expect("daemon pid").to_string();
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .expect("kill -STOP");
    assert!(stopped.success());
    let form = name_form("Still there?");
    let submitting = tokio::spawn(async move {
        let form = session
            .submit_surviving_restart(&form, None, "retry-key", Duration::from_secs(30))
            .await;
        (session, form)
    });
    // The call is on its way to a process that will never answer it; the
    // restart kills that one (`kill -9`) and starts a new daemon.
    daemon.restart().await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let shown = frontend.next_show().await;
    let (mut session, form) = within("the submission to be taken again", submitting)
        .await
        .expect("task");
    let form = form.expect("the submission survives the restart");
    assert!(
        form.as_str().ends_with(&format!("/form/{}", shown.form)),
        "{form} vs {}",
        shown.form
    );
    frontend
        .answer(&shown, "accept", json!({"name": "once"}))
        .await
        .expect("answer");
    let outcome = within("the outcome", session.wait(&form)).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "once"})));
    eventually("the form to be delivered and nothing else left", || async {
        list_forms(&conn).await.is_empty()
    })
    .await;
    let asked: Vec<Value> = history(&conn)
        .await
        .into_iter()
        .filter(|h| h["message"] == "Still there?")
        .collect();
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    assert!(frontend.is_idle(), "shown once");
}
