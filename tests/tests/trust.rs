//! A broker that proves itself (issue 15, item 2), and the small broker
//! items: after `kill -9` of elicitd a same-uid program takes
//! `dev.elicitd.Broker`; clients and front-ends must not believe it, and
//! the real daemon must say who holds its name.

use std::sync::{Arc, Mutex};

use elicit_client::ClientSession;
use elicit_proto::dbus::{BUS_NAME, Broker1Proxy, Dict, Frontend1Proxy, Origin, form_path, session_path};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, Tmux, ask, binary, eventually, within};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, Str};

const NOTE: &str = r#"{"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}"#;

/// What the impostor was sent: the member and its arguments, rendered.
type Calls = mpsc::UnboundedSender<(String, String, String)>;

/// A same-uid program that took the broker's name: it records every call
/// (member, sender, arguments) and proves nothing, since it knows no
/// secret.
struct Impostor {
    calls: Calls,
}

impl Impostor {
    fn record(&self, member: &str, header: &zbus::message::Header<'_>, args: String) {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let _ = self.calls.send((member.to_owned(), sender, args));
    }
}

#[zbus::interface(name = "dev.elicitd.Broker1")]
impl Impostor {
    fn resume_session(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        token: &str,
    ) -> OwnedObjectPath {
        self.record("ResumeSession", &header, token.to_owned());
        OwnedObjectPath::try_from("/dev/elicitd/session/1").expect("path")
    }

    fn prove_session(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        session: &str,
        nonce: Vec<u8>,
    ) -> (Vec<u8>, Vec<u8>) {
        self.record("ProveSession", &header, format!("{session} {}", nonce.len()));
        (vec![7; 32], vec![7; 32])
    }

    fn resume_proven(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        session: &str,
        proof: Vec<u8>,
    ) -> OwnedObjectPath {
        self.record("ResumeProven", &header, format!("{session} {proof:?}"));
        OwnedObjectPath::try_from(session_path(session)).expect("path")
    }

    fn prove_frontend(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        registration: &str,
        nonce: Vec<u8>,
    ) -> Vec<u8> {
        self.record(
            "ProveFrontend",
            &header,
            format!("{registration} {}", nonce.len()),
        );
        vec![7; 32]
    }

    fn register_frontend(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        path: ObjectPath<'_>,
        _options: Dict,
    ) {
        self.record("RegisterFrontend", &header, path.to_string());
    }

    fn resume_frontend(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        path: ObjectPath<'_>,
        _options: Dict,
        registration: &str,
    ) {
        self.record("ResumeFrontend", &header, format!("{path} {registration}"));
    }
}

async fn impostor(
    bus: &PrivateBus,
) -> (
    zbus::Connection,
    mpsc::UnboundedReceiver<(String, String, String)>,
) {
    let (calls, received) = mpsc::unbounded_channel();
    let conn = zbus::connection::Builder::address(bus.address())
        .expect("address")
        .serve_at(elicit_proto::dbus::BROKER_PATH, Impostor { calls })
        .expect("serve")
        .name(BUS_NAME)
        .expect("name")
        .build()
        .await
        .expect("the impostor takes the name");
    (conn, received)
}

/// The impostor leaves the bus, and with it the name.
async fn gone(fake: zbus::Connection) {
    fake.close().await.expect("the impostor leaves");
}

/// Collects what a child writes to `stream` as it goes.
fn collect(mut stream: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    tokio::spawn(async move {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buffer).await {
            if n == 0 {
                break;
            }
            sink.lock()
                .expect("lock")
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    text
}

fn read(text: &Arc<Mutex<String>>) -> String {
    text.lock().expect("lock").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicit_ask_does_not_believe_an_impostor_and_waits_for_the_real_broker() {
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let mut asking = ask(&bus, "Your note?", NOTE, &[]);
    let stdout = collect(asking.stdout.take().expect("stdout"));
    let stderr = collect(asking.stderr.take().expect("stderr"));
    let shown = frontend.next_show().await;
    daemon.kill9();
    drop(frontend);
    let (fake, mut calls) = impostor(&bus).await;
    // `elicit ask` notices the new owner and asks it to prove itself.
    let (member, asker, args) = within("the client's challenge", calls.recv())
        .await
        .expect("a call");
    assert_eq!(
        member, "ProveSession",
        "the first thing asked is a proof, not a token: {args}"
    );
    assert_eq!(args, format!("{} 32", shown.session));
    eventually("the client to refuse the impostor", || async {
        read(&stderr).contains("could not prove it is the elicitd")
    })
    .await;
    // Its forged answer, sent as the broker's own signal, is not believed.
    fake.emit_signal(
        Some(asker.as_str()),
        form_path(&shown.session, &shown.form).as_str(),
        "dev.elicitd.Request1",
        "Response",
        &("accept", r#"{"note":"FROM_IMPOSTOR"}"#, Dict::new()),
    )
    .await
    .expect("forge");
    // Had the client believed it, it would print it and exit long before
    // the real broker's answer below, which needs many round trips more
    // than the forgery, sent first, took to arrive.
    assert!(
        asking.try_wait().expect("status").is_none(),
        "elicit ask is still waiting"
    );
    assert_eq!(read(&stdout), "", "nothing printed");
    // The impostor was never sent the token, nor a resume it could use.
    gone(fake).await;
    while let Ok((member, _, args)) = calls.try_recv() {
        assert_eq!(member, "ProveSession", "{member}({args})");
    }
    // The real broker returns: the client proves itself, and the answer
    // given then is the one printed.
    daemon.restart().await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"note": "the real one"}))
        .await
        .expect("answer");
    let status = within("elicit ask to finish", asking.wait())
        .await
        .expect("status");
    eventually("the output", || async { !read(&stdout).is_empty() }).await;
    assert_eq!(status.code(), Some(0), "{}", read(&stderr));
    let printed: serde_json::Value = serde_json::from_str(read(&stdout).trim()).expect("JSON");
    assert_eq!(
        printed,
        json!({"action": "accept", "content": {"note": "the real one"}})
    );
}

/// The pane with wrapped lines joined.
fn joined(tmux: &Tmux) -> String {
    let output = tmux
        .command()
        .args(["capture-pane", "-p", "-J", "-t", "main"])
        .output()
        .expect("tmux capture-pane");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_front_end_shows_no_form_of_an_impostor() {
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let tmux = Tmux::elicit_tui(&bus, "", "--plain", "registered with elicitd").await;
    daemon.kill9();
    let (fake, mut calls) = impostor(&bus).await;
    let (member, tui, args) = within("the front-end's challenge", calls.recv())
        .await
        .expect("a call");
    assert_eq!(member, "ProveFrontend", "{args}");
    eventually("the front-end to refuse the impostor", || async {
        joined(&tmux).contains("could not prove it is the elicitd")
    })
    .await;
    // It tries to show a credential form anyway.
    let forged = Frontend1Proxy::builder(&fake)
        .destination(tui.as_str())
        .expect("destination")
        .path("/dev/elicitd/frontend/tui")
        .expect("path")
        .build()
        .await
        .expect("proxy");
    let request = r#"{"message": "FORGED: your bank password", "requestedSchema": {"type": "object",
      "properties": {"password": {"type": "string"}}}}"#;
    let mut info = Dict::new();
    info.insert("server".into(), Str::from("bank").into());
    let refused = forged.show("1", "token", request, info).await;
    assert!(
        matches!(&refused, Err(zbus::Error::MethodError(name, ..)) if name.as_str() == "org.freedesktop.DBus.Error.AccessDenied"),
        "{refused:?}"
    );
    gone(fake).await;
    while let Ok((member, _, args)) = calls.try_recv() {
        assert_eq!(member, "ProveFrontend", "nothing else was sent: {member}({args})");
    }
    // The real daemon proves it knows the registration (kept durably), and
    // the front-end shows its forms again.
    daemon.restart().await;
    let asked = ask(&bus, "Real question", NOTE, &[]);
    tmux.wait_for("Real question").await;
    // Read once the pane has drawn a later form: a forged form drawn
    // before it would still be on screen.
    assert!(!tmux.capture().contains("FORGED"), "{}", tmux.capture());
    tmux.type_text("typed for the real one");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Send it?").await;
    tmux.type_text("y");
    tmux.keys(&["Enter"]);
    let (answer, code) = elicit_tests::printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"note": "typed for the real one"}})
    );
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_daemon_names_the_impostor_and_exits() {
    let bus = PrivateBus::start();
    let (_fake, _calls) = impostor(&bus).await;
    let config = bus.dir().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let output = within(
        "elicitd to give up",
        tokio::process::Command::new(binary("elicitd"))
            .arg("--bus")
            .arg(bus.address())
            .arg("--state-dir")
            .arg(bus.dir().join("state"))
            .arg("--config")
            .arg(&config)
            .output(),
    )
    .await
    .expect("elicitd runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let pid = std::process::id();
    for needle in [
        format!("held by PID {pid}"),
        "not elicitd".to_owned(),
        format!("kill {pid}"),
        "start elicitd again".to_owned(),
    ] {
        assert!(stderr.contains(&needle), "{needle:?} missing from: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_obeys_the_sessions_per_connection_limit() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "[broker]\nsessions-per-connection = 2\n").await;
    let full = bus.connect().await;
    let broker = Broker1Proxy::new(&full).await.expect("proxy");
    for _ in 0..2 {
        broker.open_session(Dict::new()).await.expect("within the limit");
    }
    let other = bus.connect().await;
    let (path, token) = Broker1Proxy::new(&other)
        .await
        .expect("proxy")
        .open_session(Dict::new())
        .await
        .expect("open");
    let refused = broker.resume_session(&token).await;
    assert!(
        matches!(&refused, Err(zbus::Error::MethodError(name, ..)) if name.as_str() == "dev.elicitd.Error.LimitExceeded"),
        "{refused:?}"
    );
    // The proven way is held to the same limit.
    let session = path.as_str().rsplit('/').next().expect("id").to_owned();
    let nonce = elicit_proto::trust::nonce();
    let (_, challenge) = broker.prove_session(&session, &nonce).await.expect("prove");
    let me = full.unique_name().expect("name").to_string();
    let proof = elicit_proto::trust::proof(
        &token,
        elicit_proto::trust::Role::ClientToBroker,
        &session,
        &me,
        &challenge,
    );
    let refused = broker.resume_proven(&session, &proof).await;
    assert!(
        matches!(&refused, Err(zbus::Error::MethodError(name, ..)) if name.as_str() == "dev.elicitd.Error.LimitExceeded"),
        "{refused:?}"
    );
    // A wrong proof is refused as such.
    let (_, _) = broker.prove_session(&session, &nonce).await.expect("prove");
    let wrong = broker.resume_proven(&session, &[0; 32]).await;
    assert!(
        matches!(&wrong, Err(zbus::Error::MethodError(name, ..)) if name.as_str() == "dev.elicitd.Error.AccessDenied"),
        "{wrong:?}"
    );
}

/// The next form shown, past the withdrawals of forms that lost a race.
async fn next_show(frontend: &mut TestFrontend) -> elicit_tests::Shown {
    loop {
        match frontend.next().await {
            elicit_tests::Event::Show(shown) => return shown,
            elicit_tests::Event::Withdraw(..) => continue,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_is_remembered_only_when_its_answer_wins() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some("racer".into()),
        ..Origin::default()
    };
    let client = ClientSession::open(&conn, &origin).await.expect("session");
    let answerer = frontend.broker();
    let mut won = 0;
    for round in 0..20 {
        let form = client
            .submit(
                &format!(r#"{{"message": "Round {round}", "requestedSchema": {NOTE}}}"#),
                None,
                None,
            )
            .await
            .expect("submit");
        let shown = next_show(&mut frontend).await;
        let mut options = Dict::new();
        options.insert("remember".into(), Str::from("server").into());
        // The server withdraws the form while the user answers it.
        let content = json!({"note": format!("round {round}")}).to_string();
        let (answered, closed) = tokio::join!(
            answerer.answer_with(&shown.form, &shown.token, "accept", &content, options),
            client.close_form(&form),
        );
        closed.expect("close");
        if answered.is_ok() {
            won += 1;
        }
        // Remembered choices answer later forms by themselves, so forget them.
        let remembered: Vec<serde_json::Value> =
            serde_json::from_str(&answerer.list_remembered().await.expect("list")).expect("JSON");
        assert_eq!(
            remembered.len(),
            usize::from(answered.is_ok()),
            "round {round}: {answered:?}"
        );
        for choice in remembered {
            answerer
                .forget(choice["id"].as_u64().expect("id"))
                .await
                .expect("forget");
        }
    }
    println!("remember race: {won} of 20 answers won against the withdrawal");
}
