//! `elicit-tui` end to end: the real binary in tmux against the real
//! `elicitd` on a private bus, asked with `elicit ask`, driven with
//! `tmux send-keys`. Every wait polls the pane (or the process) for a
//! condition, with a deadline.

use elicit_tests::{Daemon, PrivateBus, Tmux, ask, eventually, printed, within};
use serde_json::json;

const SCHEMA: &str = r#"{"type": "object", "properties": {
  "name": {"type": "string", "title": "Name", "minLength": 1},
  "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10},
  "agree": {"type": "boolean", "title": "Agree"},
  "color": {"type": "string", "title": "Color", "enum": ["red", "green"]}
}, "required": ["name", "count"]}"#;

const CONFIRM: &str = r#"{"type": "object", "properties": {}}"#;

/// `elicit-tui` (with `extra` arguments and environment) on `bus`, in tmux,
/// once it has registered.
async fn tui(bus: &PrivateBus, env: &str, extra: &str, ready: &str) -> Tmux {
    Tmux::elicit_tui(bus, env, extra, ready).await
}

async fn full_screen(bus: &PrivateBus) -> Tmux {
    tui(bus, "NO_COLOR=1", "", "Registered with elicitd").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_filled_in_and_accepted() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let asked = ask(&bus, "Who are you?", SCHEMA, &[]);
    let pane = tmux.wait_for("Who are you?").await;
    assert!(
        pane.lines()
            .next()
            .is_some_and(|l| l.contains("asks, for elicit ask")),
        "{pane}"
    );
    assert!(
        pane.contains("> Name *") && pane.contains("Count *  (whole number, 1-10)"),
        "{pane}"
    );
    assert!(pane.contains("Enter send") && pane.contains("Esc cancel") && pane.contains("^D decline"));
    tmux.type_text("Ann");
    tmux.keys(&["Tab"]);
    tmux.type_text("7");
    tmux.keys(&["Tab", "Space", "Tab", "Right"]);
    tmux.wait_for("(*) red").await;
    tmux.keys(&["Enter"]);
    let (answer, code) = printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"name": "Ann", "count": 7, "agree": true, "color": "red"}})
    );
    assert_eq!(code, Some(0));
    tmux.wait_for(": accepted.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_and_cancel() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let asked = ask(&bus, "First question", SCHEMA, &[]);
    tmux.wait_for("First question").await;
    tmux.keys(&["C-d"]);
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    let asked = ask(&bus, "Second question", SCHEMA, &[]);
    tmux.wait_for("Second question").await;
    tmux.type_text("Half typed");
    tmux.keys(&["Escape"]);
    assert_eq!(printed(asked).await, (json!({"action": "cancel"}), Some(4)));
    tmux.wait_for(": cancelled.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_entry_is_shown_and_corrected() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let asked = ask(&bus, "Count something", SCHEMA, &[]);
    tmux.wait_for("Count something").await;
    tmux.type_text("Ann");
    tmux.keys(&["Tab"]);
    tmux.type_text("12");
    tmux.keys(&["Enter"]);
    let pane = tmux.wait_for("! Count must be at most 10").await;
    assert!(pane.contains("1 problem to fix before sending."), "{pane}");
    tmux.keys(&["C-u"]);
    tmux.type_text("abc");
    tmux.wait_for("! Count must be a whole number").await;
    tmux.keys(&["C-u"]);
    tmux.type_text("3");
    tmux.keys(&["Enter"]);
    let (answer, code) = printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"name": "Ann", "count": 3}})
    );
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_queue_and_are_answered_in_turn() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let first = ask(&bus, "Delete the cache?", CONFIRM, &[]);
    tmux.wait_for("Delete the cache?").await;
    let second = ask(&bus, "Rebuild the index?", CONFIRM, &[]);
    let pane = tmux.wait_for("Waiting: 2 forms").await;
    assert!(pane.contains("1. ") && pane.contains("2. "), "{pane}");
    // The newer session is answered first: switch to it, decline it.
    tmux.keys(&["NPage"]);
    tmux.wait_for("[form 2 of 2]").await;
    tmux.wait_for("Rebuild the index?").await;
    tmux.keys(&["d"]);
    assert_eq!(printed(second).await, (json!({"action": "decline"}), Some(3)));
    tmux.wait_for("Waiting: 1 form").await;
    tmux.keys(&["Enter"]);
    assert_eq!(
        printed(first).await,
        (json!({"action": "accept", "content": {}}), Some(0))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_second_form_waits_and_comes_next() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let conn = bus.connect().await;
    let origin = elicit_proto::dbus::Origin {
        server: Some("files".into()),
        host: Some("agent".into()),
        ..Default::default()
    };
    let mut session = elicit_client::ClientSession::open(&conn, &origin)
        .await
        .expect("a session");
    let confirm =
        |message: &str| json!({"message": message, "requestedSchema": {"type": "object", "properties": {}}});
    let first = session
        .submit(&confirm("First of two").to_string(), None, None)
        .await
        .expect("submit");
    let second = session
        .submit(&confirm("Second of two").to_string(), None, None)
        .await
        .expect("submit");
    let pane = tmux.wait_for("1 more queued").await;
    assert!(
        pane.contains("files asks, for agent") && pane.contains("First of two"),
        "{pane}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("Second of two").await;
    tmux.keys(&["d"]);
    let outcome = within("the first outcome", session.wait(&first))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "accept");
    let outcome = within("the second outcome", session.wait(&second))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "decline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_form_disappears_with_the_reason() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let asked = ask(&bus, "Quick question", SCHEMA, &["--timeout", "1"]);
    tmux.wait_for("Quick question").await;
    let (answer, _) = printed(asked).await;
    assert_eq!(answer["action"], "cancel");
    let pane = tmux.wait_for("was withdrawn: timed out.").await;
    assert!(!pane.contains("Quick question"), "{pane}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_opens_only_after_confirmation() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let opened = bus.dir().join("opened");
    let opener = bus.dir().join("opener.sh");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .expect("opener");
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let tmux = tui(
        &bus,
        &format!("NO_COLOR=1 ELICIT_OPENER='{}'", opener.display()),
        "",
        "Registered with elicitd",
    )
    .await;
    let url = "https://example.com/oauth/authorize?state=1";
    let asked = ask(&bus, "Sign in", url, &[]);
    let pane = tmux.wait_for("Host: example.com").await;
    assert!(
        pane.contains(url) && pane.contains("Nothing has been opened."),
        "{pane}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("Open this address in your browser?").await;
    assert!(!opened.exists(), "nothing opens before the user says yes");
    tmux.keys(&["y"]);
    assert_eq!(printed(asked).await, (json!({"action": "accept"}), Some(0)));
    eventually("the opener to run", || async { opened.exists() }).await;
    let got = std::fs::read_to_string(&opened).expect("opened");
    assert_eq!(got.trim(), url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_follows_a_resize() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let asked = ask(&bus, "Resize me", SCHEMA, &[]);
    tmux.wait_for("Resize me").await;
    tmux.resize(50, 14);
    tmux.wait_for("Enter send  Esc cancel").await;
    tmux.resize(30, 8);
    tmux.wait_for("enlarge the terminal").await;
    tmux.resize(80, 24);
    tmux.wait_for("Resize me").await;
    tmux.keys(&["Escape"]);
    assert_eq!(printed(asked).await.0, json!({"action": "cancel"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_queued_before_the_tui_starts_and_after_a_daemon_restart_are_shown() {
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let early = ask(&bus, "Asked before anyone listened", CONFIRM, &[]);
    // Wait for the form to be queued, so that the front-end comes second.
    let conn = bus.connect().await;
    let broker = elicit_proto::dbus::Broker1Proxy::new(&conn).await.expect("proxy");
    eventually("the form to be queued", || {
        let broker = broker.clone();
        async move {
            broker
                .list_forms()
                .await
                .is_ok_and(|forms| forms.contains("queued"))
        }
    })
    .await;
    let tmux = tui(&bus, "NO_COLOR=1", "", "Asked before anyone listened").await;
    tmux.keys(&["Enter"]);
    assert_eq!(printed(early).await.0, json!({"action": "accept", "content": {}}));
    daemon.restart().await;
    tmux.wait_for("Registered with elicitd").await;
    let late = ask(&bus, "Asked after a restart", CONFIRM, &[]);
    tmux.wait_for("Asked after a restart").await;
    tmux.keys(&["d"]);
    assert_eq!(printed(late).await.0, json!({"action": "decline"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_broker_may_show_forms() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let _tmux = full_screen(&bus).await;
    let conn = bus.connect().await;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("bus proxy");
    let daemon_name = zbus::names::BusName::try_from(elicit_proto::dbus::BUS_NAME).expect("a name");
    let daemon = dbus
        .get_name_owner(daemon_name)
        .await
        .expect("elicitd owns its name");
    let me = conn.unique_name().map(|n| n.to_string()).unwrap_or_default();
    // Besides this test and elicitd, only the TUI is connected: a peer
    // without an object server would never reply, so none is called.
    let others: Vec<String> = dbus
        .list_names()
        .await
        .expect("names")
        .iter()
        .map(|n| n.to_string())
        .filter(|n| n.starts_with(':') && *n != me && *n != daemon.as_str())
        .collect();
    assert_eq!(others.len(), 1, "only the TUI besides elicitd: {others:?}");
    let forged = (
        "1",
        "forged",
        r#"{"message":"Your password?"}"#,
        elicit_proto::dbus::Dict::new(),
    );
    let reply = within(
        "the TUI to answer a forged Show",
        conn.call_method(
            Some(others[0].as_str()),
            "/dev/elicitd/frontend/tui",
            Some("dev.elicitd.Frontend1"),
            "Show",
            &forged,
        ),
    )
    .await;
    let refused = matches!(
        reply,
        Err(zbus::Error::MethodError(ref error, _, _))
            if error.as_str() == "org.freedesktop.DBus.Error.AccessDenied"
    );
    assert!(
        refused,
        "the TUI refuses a Show that does not come from elicitd: {reply:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_asks_line_by_line() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = tui(&bus, "", "--plain", "registered with elicitd").await;
    let asked = ask(&bus, "Plain question", SCHEMA, &[]);
    tmux.wait_for("Name []:").await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("! Name is required").await;
    tmux.type_text("Ann");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Count []:").await;
    tmux.type_text("11");
    tmux.keys(&["Enter"]);
    tmux.wait_for("! Count must be at most 10").await;
    tmux.type_text("4");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Agree []:").await;
    tmux.type_text("n");
    tmux.keys(&["Enter"]);
    tmux.wait_for("  2) green").await;
    tmux.type_text("2");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Send it? [y]es").await;
    tmux.type_text("y");
    tmux.keys(&["Enter"]);
    let (answer, code) = printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"name": "Ann", "count": 4, "agree": false, "color": "green"}})
    );
    assert_eq!(code, Some(0));
    tmux.wait_for("Sent to").await;
    let asked = ask(&bus, "Plain decline", SCHEMA, &[]);
    tmux.wait_for("Plain decline").await;
    tmux.type_text(":d");
    tmux.keys(&["Enter"]);
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
}

/// The full screen in `locale`, once it has registered (`ready`, in that
/// language).
async fn full_screen_in(bus: &PrivateBus, locale: &str, ready: &str) -> Tmux {
    let env = format!("NO_COLOR=1 {}", elicit_tests::language_env_words(locale));
    tui(bus, &env, "", ready).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_speaks_german() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen_in(&bus, "de_DE.UTF-8", "Bei elicitd angemeldet").await;
    let asked = ask(&bus, "Who are you?", SCHEMA, &[]);
    // The server's text is shown as sent; elicitd's own words are German.
    let pane = tmux.wait_for("Who are you?").await;
    assert!(
        pane.contains("Mit * markierte Felder sind erforderlich."),
        "{pane}"
    );
    assert!(pane.contains("Count *  (ganze Zahl, 1–10)"), "{pane}");
    assert!(
        pane.contains("Enter senden") && pane.contains("Esc abbrechen") && pane.contains("^D ablehnen"),
        "{pane}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("Vor dem Senden sind 2 Probleme zu beheben.").await;
    tmux.keys(&["F1"]);
    tmux.wait_for("Jede Taste schließt diese Hilfe.").await;
    // Not Escape: an Escape followed at once by ^D reads as Alt-^D.
    tmux.keys(&["F1"]);
    eventually("the help to close", || async {
        !tmux.capture().contains("Jede Taste")
    })
    .await;
    tmux.keys(&["C-d"]);
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    tmux.wait_for(": abgelehnt.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_speaks_french() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen_in(&bus, "fr_FR.UTF-8", "Inscrit auprès d’elicitd").await;
    let asked = ask(&bus, "Qui êtes-vous ?", CONFIRM, &[]);
    let pane = tmux.wait_for("Qui êtes-vous ?").await;
    assert!(
        pane.contains("Rien à remplir. Entrée accepte, d refuse, Échap annule."),
        "{pane}"
    );
    assert!(
        pane.contains("Enter accepter") && pane.contains("d refuser"),
        "{pane}"
    );
    tmux.keys(&["Enter"]);
    assert_eq!(
        printed(asked).await,
        (json!({"action": "accept", "content": {}}), Some(0))
    );
    tmux.wait_for(" : accepté.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_language_without_a_catalogue_is_english() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen_in(&bus, "he_IL.UTF-8", "Registered with elicitd").await;
    let asked = ask(&bus, "Who are you?", SCHEMA, &[]);
    let pane = tmux.wait_for("Who are you?").await;
    assert!(
        pane.contains("Fields marked * are required.") && pane.contains("Enter send"),
        "{pane}"
    );
    tmux.keys(&["Escape"]);
    assert_eq!(printed(asked).await, (json!({"action": "cancel"}), Some(4)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heading_names_the_asker() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = full_screen(&bus).await;
    let asked = ask(
        &bus,
        "Deploy now?",
        CONFIRM,
        &["--server", "deployer", "--host", "release script"],
    );
    let pane = tmux.wait_for("Deploy now?").await;
    assert!(
        pane.lines()
            .next()
            .is_some_and(|l| l.contains("deployer asks, for release script")),
        "{pane}"
    );
    tmux.keys(&["Escape"]);
    assert_eq!(printed(asked).await.1, Some(4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_speaks_french() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let env = elicit_tests::language_env_words("fr_FR.UTF-8");
    let tmux = tui(&bus, &env, "--plain", "inscrit auprès d’elicitd").await;
    let asked = ask(&bus, "Plain question", SCHEMA, &[]);
    let pane = tmux.wait_for("Name []:").await;
    assert!(pane.contains("Champ 1 sur 4 : Name (obligatoire)"), "{pane}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("! Name").await;
    tmux.type_text(":d");
    tmux.keys(&["Enter"]);
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    tmux.wait_for(" : refusé.").await;
}
