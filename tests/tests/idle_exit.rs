//! Idle means nothing running: the daemon exits after `exit-on-idle-secs`
//! with no session open, keeps its name's bus record, and the next call
//! starts it again by D-Bus activation; a front-end left open registers
//! again with the new daemon (and no program starts beside it); pending
//! forms and `--no-exit-on-idle` keep it running; a proxy opens its
//! session only at its first form and closes it when its forms are done;
//! a client whose daemon died (with its form waiting, or before replying
//! to its submission) calls the name, which starts the next one.
//!
//! The activated daemons run from a private bus's service folder, with a
//! one-second idle period in their config.

use std::process::Command;

use elicit_client::ClientSession;
use elicit_proto::dbus::Origin;
use elicit_tests::home::{Home, Reaper, owner_pid};
use elicit_tests::mcp::{Host, everything, text_of};
use elicit_tests::procs::exited;
use elicit_tests::{
    Daemon, PrivateBus, TestFrontend, Tmux, ask, binary, eventually, list_forms, printed, within,
};
use futures_util::StreamExt;
use serde_json::json;

const IDLE_1S: &str = "[broker]\nexit-on-idle-secs = 1\n";

const SCHEMA: &str = r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;

/// Waits until the broker's name has an owner on `bus`; its PID.
async fn daemon_pid(bus: &PrivateBus) -> u32 {
    new_daemon_pid(bus, None).await
}

/// Waits until the broker's name has an owner on `bus` other than `old`
/// (which the bus may list until it has seen it go); its PID.
async fn new_daemon_pid(bus: &PrivateBus, old: Option<u32>) -> u32 {
    within("the daemon to own its name", async {
        loop {
            if let Some(pid) = owner_pid(bus).await
                && Some(pid) != old
            {
                break pid;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
}

/// Waits until daemon `pid` has exited and the name has no owner.
async fn exits(bus: &PrivateBus, pid: u32) {
    eventually("the daemon to exit idle", || async move { exited(pid) }).await;
    assert_eq!(owner_pid(bus).await, None, "the name is released");
}

/// Answers the first listed form with `elicit answer ID --decline`.
async fn decline_first(bus: &PrivateBus) {
    let conn = bus.connect().await;
    let id = within("a form to be queued", async {
        loop {
            if let Some(form) = list_forms(&conn).await.first() {
                break form["id"].to_string().trim_matches('"').to_owned();
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    let answered = Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "answer", &id, "--decline"])
        .output()
        .expect("elicit answer");
    assert!(answered.status.success(), "{answered:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_daemon_exits_and_the_next_ask_starts_it_again() {
    let home = Home::with_config(IDLE_1S);
    let bus = home.session();

    let asking = ask(&bus, "First?", SCHEMA, &[]);
    let first = daemon_pid(&bus).await;
    let _reap_first = Reaper(first);
    decline_first(&bus).await;
    assert_eq!(printed(asking).await.1, Some(3));
    // `elicit ask` closed its session: nothing keeps the daemon.
    exits(&bus, first).await;
    let log = home.log();
    assert!(
        log.contains("elicitd stopping: idle for 1 s (nothing pending, no session open)"),
        "{log}"
    );
    // The bus lives on and can start elicitd: the record that env-stripped
    // proxies find it by stays.
    let records = elicit_tests::bus_records(home.path());
    assert!(
        records.iter().any(|(_, address)| address == bus.address()),
        "{records:?}"
    );

    // The next call starts a fresh daemon by activation, which serves it.
    let asking = ask(&bus, "Second?", SCHEMA, &[]);
    let second = daemon_pid(&bus).await;
    let _reap_second = Reaper(second);
    assert_ne!(second, first);
    decline_first(&bus).await;
    assert_eq!(printed(asking).await.1, Some(3));
    exits(&bus, second).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_front_end_left_open_registers_again_and_no_program_starts_beside_it() {
    let started = tempfile::tempdir().expect("temp dir");
    let started = started.path().join("started");
    // A `tui` program the daemon would start for a form nobody can show.
    let home = Home::with_config(&format!(
        "{IDLE_1S}[[frontends.program]]\nname = \"tui\"\ncommand = [\"sh\", \"-c\", \"echo tui >> '{}'\"]\n",
        started.display()
    ));
    let bus = home.session();
    // A front-end waits for the broker rather than starting it.
    let (ok, said) = home.status(&bus);
    assert!(ok, "{said}");
    let first = daemon_pid(&bus).await;
    // A registered front-end does not keep the daemon.
    let tmux = Tmux::elicit_tui(&bus, "", "--plain", "registered with elicitd").await;
    let _reap_first = Reaper(first);
    exits(&bus, first).await;

    // Someone else's call brings the daemon back: the TUI, still open,
    // registers again and shows the form, and the daemon waited for it
    // instead of starting a second front-end.
    let asking = ask(&bus, "After the comeback", SCHEMA, &[]);
    let second = daemon_pid(&bus).await;
    let _reap_second = Reaper(second);
    tmux.wait_for("After the comeback").await;
    tmux.type_text(":d");
    tmux.keys(&["Enter"]);
    assert_eq!(printed(asking).await.1, Some(3));
    assert!(
        !started.exists(),
        "a front-end program started beside the open TUI: {}",
        home.log()
    );
}

/// Opens a session on `bus` and submits a form that nobody answers yet.
async fn pending_form(
    bus: &PrivateBus,
) -> (zbus::Connection, ClientSession, zbus::zvariant::OwnedObjectPath) {
    let conn = bus.connect().await;
    let origin = Origin {
        host: Some("idle-test".into()),
        ..Origin::default()
    };
    let session = ClientSession::open(&conn, &origin).await.expect("open a session");
    let form = session
        .submit(
            &json!({"message": "Still there?", "requestedSchema": serde_json::from_str::<serde_json::Value>(SCHEMA).expect("schema")}).to_string(),
            None,
            None,
        )
        .await
        .expect("submit");
    (conn, session, form)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_forms_and_no_exit_on_idle_keep_the_daemon_running() {
    // Started in this order, each of the later ones idles no longer than
    // the ones before: once the plain one has exited, the others have
    // had their chance to.
    let flagged_bus = PrivateBus::start();
    let flagged = Daemon::start_with(&flagged_bus, IDLE_1S, &[], &["--no-exit-on-idle"]).await;
    let pending_bus = PrivateBus::start();
    let pending = Daemon::start_with(&pending_bus, IDLE_1S, &[], &[]).await;
    let (_conn, mut session, form) = pending_form(&pending_bus).await;
    let plain_bus = PrivateBus::start();
    let plain = Daemon::start_with(&plain_bus, IDLE_1S, &[], &[]).await;
    let plain_pid = plain.pid().expect("running");
    exits(&plain_bus, plain_pid).await;
    let pending_pid = pending.pid().expect("running");
    assert!(
        !exited(pending_pid),
        "a pending form keeps the daemon: {}",
        pending.log()
    );
    let flagged_pid = flagged.pid().expect("running");
    assert!(
        !exited(flagged_pid),
        "--no-exit-on-idle keeps the daemon: {}",
        flagged.log()
    );

    // Once the form is answered, acknowledged and its session closed,
    // nothing keeps it.
    let mut frontend = TestFrontend::register(&pending_bus, "script", 0).await;
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "decline", serde_json::Value::Null)
        .await
        .expect("decline");
    let outcome = within("the outcome", session.wait(&form)).await.expect("outcome");
    assert_eq!(outcome.action, "decline");
    assert!(!exited(pending_pid), "an open session keeps the daemon");
    session.close().await.expect("close");
    exits(&pending_bus, pending_pid).await;
    assert!(
        !exited(flagged_pid),
        "--no-exit-on-idle keeps the daemon: {}",
        flagged.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_opens_its_session_at_its_first_form_and_closes_it_when_done() {
    let Some(server) = everything() else { return };
    let home = Home::with_config(IDLE_1S);
    let bus = home.session();
    let (ok, said) = home.status(&bus);
    assert!(ok, "{said}");
    let first = daemon_pid(&bus).await;
    let _reap_first = Reaper(first);

    // A proxy whose server does not elicit holds no session: the daemon
    // exits while it runs, and it relays on.
    let mut host = Host::proxy(bus.address(), &[], &server);
    host.initialize(json!({})).await;
    host.call(1, "tools/list", json!({})).await;
    exits(&bus, first).await;
    let listed = host.call(2, "tools/list", json!({})).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");

    // Its first form starts the daemon again by activation.
    let call = json!({"name": "trigger-elicitation-request", "arguments": {}});
    host.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":call}))
        .await;
    let second = daemon_pid(&bus).await;
    let _reap_second = Reaper(second);
    decline_first(&bus).await;
    let (result, _) = host.response(json!(3)).await;
    assert!(text_of(&result).contains("declined"), "{result}");
    // Its forms are done: it closes its session, and the daemon exits
    // again while the proxy still runs.
    exits(&bus, second).await;
    assert_eq!(
        host.child.try_wait().expect("the proxy's state"),
        None,
        "the proxy runs on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_client_starts_a_daemon_that_left_while_its_form_waits() {
    // As under systemd, when a call races an idle exit: the daemon is
    // stopped with a form pending, and nobody else calls.
    let home = Home::new();
    let bus = home.session();
    let asking = ask(&bus, "Still waiting?", SCHEMA, &[]);
    let first = daemon_pid(&bus).await;
    let _reap_first = Reaper(first);
    let conn = bus.connect().await;
    eventually("the form to be queued", || async {
        !list_forms(&conn).await.is_empty()
    })
    .await;
    elicit_tests::procs::kill("-TERM", first);
    eventually("the daemon to stop", || async move { exited(first) }).await;
    // `elicit ask` calls the name, which activates a new daemon; it
    // re-attaches and gets the answer given there.
    let second = new_daemon_pid(&bus, Some(first)).await;
    let _reap_second = Reaper(second);
    decline_first(&bus).await;
    assert_eq!(printed(asking).await.1, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_whose_daemon_died_before_replying_starts_it_again() {
    // The daemon dies with an `Elicit` unanswered and nobody else calls
    // its name, so D-Bus activation starts the next one only if the
    // submitter calls. It did not: `elicit ask` waited out its patience
    // and failed with NoReply (the restart test above, about one run in
    // eight, when its SIGTERM came before the submission's reply went out).
    let home = Home::new();
    let bus = home.session();
    // Started first, so that the session hears of no owner but the next:
    // one that heard this one arrive would call it again at once.
    let (ok, said) = home.status(&bus);
    assert!(ok, "elicit status starts the daemon: {said}");
    let first = daemon_pid(&bus).await;
    let _reap_first = Reaper(first);
    let conn = bus.connect().await;
    let mut session = ClientSession::open(&conn, &Origin::default())
        .await
        .expect("a session opens");
    let mut elicit_calls = watch_calls(&bus, "Elicit").await;
    // Stopped, the daemon cannot reply; killed, it never will.
    elicit_tests::procs::kill("-STOP", first);
    let submission = session.submit_surviving_restart(
        r#"{"message": "Once?", "requestedSchema": {"type": "object", "properties": {}}}"#,
        None,
        "once",
        std::time::Duration::from_secs(30),
    );
    let killing = async {
        within("the Elicit call on the bus", elicit_calls.next()).await;
        elicit_tests::procs::kill("-KILL", first);
        let second = new_daemon_pid(&bus, Some(first)).await;
        Reaper(second)
    };
    let (submitted, _reap_second) = tokio::join!(within("the submission", submission), killing);
    let form = submitted.expect("submitted again once the next daemon is back");
    let listed = list_forms(&conn).await;
    assert_eq!(listed.len(), 1, "one form, stored once: {listed:?}");
    let id = listed[0]["id"].to_string();
    assert!(
        form.as_str().ends_with(&format!("/{}", id.trim_matches('"'))),
        "the path names the form listed: {form:?} {listed:?}"
    );
}

/// The method calls named `member` that cross `bus`, as a monitor sees them.
async fn watch_calls(bus: &PrivateBus, member: &str) -> zbus::MessageStream {
    let conn = bus.connect().await;
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::MethodCall)
        .member(member)
        .expect("a member name")
        .build();
    zbus::fdo::MonitoringProxy::new(&conn)
        .await
        .expect("the monitoring interface")
        .become_monitor(&[rule], 0)
        .await
        .expect("a monitor");
    zbus::MessageStream::from(conn)
}
