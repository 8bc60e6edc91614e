//! `elicit-notify` end to end: the real binary against the real `elicitd`
//! on a private bus, with a real notification server (dunst under Xvfb,
//! driven through its context menu), asked with `elicit ask`. Every wait
//! is for a condition, with a deadline.

#[path = "notify/dunst.rs"]
mod dunst;
#[path = "notify/fake_server.rs"]
mod fake_server;

use std::path::PathBuf;
use std::process::Stdio;

use elicit_proto::dbus::Broker1Proxy;
use elicit_tests::{Daemon, PrivateBus, TestFrontend, binary, eventually, printed};
use serde_json::{Value, json};

use dunst::Dunst;
use fake_server::FakeServer;

const CONFIRM: &str = r#"{"type": "object", "properties": {}}"#;
const COLOR: &str = r#"{"type": "object", "properties": {"color": {"type": "string",
  "title": "Color", "enum": ["red", "green", "blue"]}}, "required": ["color"]}"#;
const NAME: &str = r#"{"type": "object", "properties": {"name": {"type": "string",
  "title": "Name", "minLength": 1}}, "required": ["name"]}"#;

/// notify first; a front-end named `tui` is where "Open…" leads.
const CONFIG: &str = "[frontends]\npreference = [\"notify\", \"tui\"]\n";

/// A running `elicit-notify`.
struct Notify {
    _child: tokio::process::Child,
    log: PathBuf,
}

impl Notify {
    /// Starts `elicit-notify` on `bus` and waits until it has registered.
    async fn start(bus: &PrivateBus) -> Notify {
        Notify::start_with_env(bus, Vec::new()).await
    }

    /// As [`Notify::start`], with `env` added (a language).
    async fn start_with_env(bus: &PrivateBus, env: Vec<(&str, String)>) -> Notify {
        let (child, log) = elicit_tests::notify::start(bus, env).await;
        Notify { _child: child, log }
    }

    /// What it wrote to standard error.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Starts `elicit ask` with `schema`.
fn ask(bus: &PrivateBus, message: &str, schema: &str) -> tokio::process::Child {
    elicit_tests::ask(bus, message, schema, &[])
}

async fn forms(conn: &zbus::Connection) -> Vec<Value> {
    let broker = Broker1Proxy::new(conn).await.expect("proxy");
    serde_json::from_str(&broker.list_forms().await.expect("list")).expect("JSON")
}

/// Everything a notification test needs: bus, dunst, daemon, front-end.
struct Desk {
    bus: PrivateBus,
    dunst: Dunst,
    daemon: Daemon,
    notify: Notify,
    conn: zbus::Connection,
}

async fn desk() -> Desk {
    desk_with_env(Vec::new()).await
}

/// As [`desk`], elicit-notify running with `env` added (a language).
async fn desk_with_env(env: Vec<(&str, String)>) -> Desk {
    let bus = PrivateBus::start();
    let dunst = Dunst::start(&bus).await;
    let daemon = Daemon::start(&bus, CONFIG).await;
    let notify = Notify::start_with_env(&bus, env).await;
    let conn = bus.connect().await;
    Desk {
        bus,
        dunst,
        daemon,
        notify,
        conn,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_is_accepted_from_the_notification() {
    let desk = desk().await;
    let asked = ask(&desk.bus, "Deploy now?", CONFIRM);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    let menu = desk.dunst.choose("accept").await;
    let asks = format!("#Accept ({} (for elicit ask) asks)", elicit_tests::asker_name());
    assert!(menu.contains(&asks), "{menu}");
    assert!(menu.contains("#Decline ("), "{menu}");
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
    // Answered: the notification is closed.
    desk.dunst.wait_displayed(&desk.conn, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_option_choice_is_answered_from_the_notification() {
    let desk = desk().await;
    let asked = ask(&desk.bus, "Which color?", COLOR);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    let menu = desk.dunst.choose("option-1").await;
    for label in ["#red (", "#green (", "#blue (", "#Decline ("] {
        assert!(menu.contains(label), "{label} missing from {menu}");
    }
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {"color": "green"}}));
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dismissed_notification_leaves_the_form_pending() {
    let desk = desk().await;
    let mut asked = ask(&desk.bus, "Deploy now?", CONFIRM);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    desk.dunst.dismiss();
    // Not declined: passed on, and with no other front-end it waits.
    eventually("the form to wait, queued", || async {
        let listed = forms(&desk.conn).await;
        listed.len() == 1 && listed[0]["state"] == "queued"
    })
    .await;
    assert!(
        asked.try_wait().expect("ask").is_none(),
        "elicit ask got no answer"
    );
    // It is still there to answer: a front-end that comes takes it.
    let mut tui = TestFrontend::register(&desk.bus, "tui", 0).await;
    let shown = tui.next_show().await;
    assert_eq!(shown.request["message"], "Deploy now?");
    tui.answer(&shown, "accept", json!({})).await.expect("answer");
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_action_is_ignored() {
    let desk = desk().await;
    let asked = ask(&desk.bus, "Deploy now?", CONFIRM);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    // The menu shows the notification's id; picking nothing changes
    // nothing.
    let menu = desk.dunst.choose("nothing").await;
    let id = dunst::id_in_menu(&menu, "accept").expect("the id in the menu");
    // Any client can emit ActionInvoked: this one is not the server. A
    // flood of them (more than a stream queues) must not stall
    // elicit-notify either.
    for _ in 0..200 {
        desk.conn
            .emit_signal(
                None::<&str>,
                "/org/freedesktop/Notifications",
                "org.freedesktop.Notifications",
                "ActionInvoked",
                &(id, "accept"),
            )
            .await
            .expect("emit the forgery");
    }
    eventually("elicit-notify to ignore the forgery", || async {
        desk.notify.log().contains("ignored a notification signal")
    })
    .await;
    let listed = forms(&desk.conn).await;
    assert_eq!(listed[0]["state"], "presented", "{listed:?}");
    assert_eq!(listed[0]["presented-to"], "notify");
    // The real server's action still counts.
    desk.dunst.choose("decline").await;
    let (answer, code) = printed(asked).await;
    assert_eq!(answer["action"], "decline");
    assert_eq!(code, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_hands_a_rich_form_to_the_next_front_end() {
    let desk = desk().await;
    let mut tui = TestFrontend::register(&desk.bus, "tui", 0).await;
    let asked = ask(&desk.bus, "Who are you?", NAME);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    let menu = desk.dunst.choose("open").await;
    assert!(menu.contains("#Open… ("), "{menu}");
    assert!(
        !menu.contains("accept]"),
        "a rich form is not accepted from a notification: {menu}"
    );
    let shown = tui.next_show().await;
    assert_eq!(shown.request["message"], "Who are you?");
    desk.dunst.wait_displayed(&desk.conn, 0).await;
    tui.answer(&shown, "accept", json!({"name": "Ann"}))
        .await
        .expect("answer");
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {"name": "Ann"}}));
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_form_closes_its_notification() {
    let desk = desk().await;
    let mut asked = ask(&desk.bus, "Deploy now?", CONFIRM);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    // The asking client goes away: the daemon withdraws the form.
    asked.kill().await.expect("kill elicit ask");
    desk.dunst.wait_displayed(&desk.conn, 0).await;
    eventually("the form to be gone", || async {
        forms(&desk.conn).await.is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_actions_gets_a_notice_and_the_form_moves_on() {
    let bus = PrivateBus::start();
    let plain = FakeServer::start(&bus, &["body"], 1).await;
    let _daemon = Daemon::start(&bus, CONFIG).await;
    let _notify = Notify::start(&bus).await;
    let mut tui = TestFrontend::register(&bus, "tui", 0).await;
    let asked = ask(&bus, "Deploy now?", CONFIRM);
    // The notification cannot take the answer, so the form goes on to
    // the terminal front-end at once.
    let shown = tui.next_show().await;
    let notices = plain.shown();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].actions.is_empty(), "{notices:?}");
    assert!(notices[0].summary.ends_with("asks"), "{notices:?}");
    assert!(
        notices[0].body.starts_with("Deploy now?") && notices[0].body.contains("elicit-tui"),
        "{notices:?}"
    );
    tui.answer(&shown, "accept", json!({})).await.expect("answer");
    let (answer, _) = printed(asked).await;
    assert_eq!(answer["action"], "accept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_starts_elicit_notify_for_a_waiting_form() {
    let bus = PrivateBus::start();
    let dunst = Dunst::start(&bus).await;
    // Only where a display is: the daemon's environment has one.
    let config = format!(
        "{CONFIG}[[frontends.program]]\nname = \"notify\"\ncommand = [\"{}\", \"--bus\", \"{}\"]\nwhen = \"display\"\n",
        binary("elicit-notify").display(),
        bus.address()
    );
    let _daemon = Daemon::start_with_env(
        &bus,
        &config,
        &[("DISPLAY", Some(dunst.display())), ("WAYLAND_DISPLAY", None)],
    )
    .await;
    let conn = bus.connect().await;
    // The form waits first; the front-end it starts shows it.
    let asked = ask(&bus, "Deploy now?", CONFIRM);
    dunst.wait_displayed(&conn, 1).await;
    dunst.choose("accept").await;
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_daemon_restart_the_form_is_shown_again() {
    let mut desk = desk().await;
    let asked = ask(&desk.bus, "Deploy now?", CONFIRM);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    let before = dunst::id_in_menu(&desk.dunst.choose("nothing").await, "accept");
    desk.daemon.restart().await;
    // The old notification's token died with the daemon: it is closed,
    // and the restored form comes back as a new one.
    eventually("the form in a new notification", || async {
        if desk.dunst.displayed(&desk.conn).await != 1 {
            return false;
        }
        let now = dunst::id_in_menu(&desk.dunst.choose("nothing").await, "accept");
        now.is_some() && now != before
    })
    .await;
    desk.dunst.choose("accept").await;
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_current_owner_of_the_server_name_is_believed() {
    let bus = PrivateBus::start();
    let first = FakeServer::start(&bus, &["actions", "body"], 1).await;
    let _daemon = Daemon::start(&bus, CONFIG).await;
    let notify = Notify::start(&bus).await;
    let conn = bus.connect().await;
    let asked = ask(&bus, "First?", CONFIRM);
    eventually("the first notification", || async { !first.shown().is_empty() }).await;
    // The first server leaves; its notifications went with it, so the form
    // is passed on (nobody else is there: it waits).
    let shown_first = first.shown()[0].clone();
    drop(first);
    eventually("the first form to wait, queued", || async {
        let listed = forms(&conn).await;
        listed.len() == 1 && listed[0]["state"] == "queued"
    })
    .await;
    // Another server takes the name; from now on it is the one believed.
    let second = FakeServer::start(&bus, &["actions", "body"], 100).await;
    let asked_again = ask(&bus, "Second?", CONFIRM);
    eventually("the second notification", || async { !second.shown().is_empty() }).await;
    let shown_second = second.shown()[0].clone();
    assert_eq!(
        shown_second.sender, shown_first.sender,
        "one connection sends and listens"
    );
    second.invoke(&shown_second, "accept").await;
    let (answer, code) = printed(asked_again).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
    assert!(!notify.log().contains("ignored"), "{}", notify.log());
    drop(asked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_notification_server_forms_move_on() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, CONFIG).await;
    let notify = Notify::start(&bus).await;
    let mut tui = TestFrontend::register(&bus, "tui", 0).await;
    let asked = ask(&bus, "Deploy now?", CONFIRM);
    let shown = tui.next_show().await;
    // Both front-ends are shown the form; elicit-notify says what it found
    // in its own time.
    eventually("elicit-notify to find no notification server", || async {
        notify.log().contains("no notification server")
    })
    .await;
    tui.answer(&shown, "decline", Value::Null).await.expect("answer");
    let (answer, code) = printed(asked).await;
    assert_eq!(answer["action"], "decline");
    assert_eq!(code, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notification_speaks_german_and_french() {
    for (locale, accept, decline, open, asks) in [
        (
            "de_DE.UTF-8",
            "#Annehmen (",
            "#Ablehnen (",
            "#Öffnen … (",
            " fragt)",
        ),
        (
            "fr_FR.UTF-8",
            "#Accepter (",
            "#Refuser (",
            "#Ouvrir… (",
            " demande)",
        ),
    ] {
        let desk = desk_with_env(elicit_tests::language_env(locale)).await;
        // The server's message is shown as sent; the actions and the
        // summary are in the user's language.
        let asked = ask(&desk.bus, "Deploy now?", CONFIRM);
        desk.dunst.wait_displayed(&desk.conn, 1).await;
        let menu = desk.dunst.choose("decline").await;
        assert!(
            menu.contains(accept) && menu.contains(decline),
            "{locale}: {menu}"
        );
        assert!(menu.contains(asks), "{locale}: {menu}");
        assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
        desk.dunst.wait_displayed(&desk.conn, 0).await;
        // A form that needs more than a notification: "Open…".
        let asked = ask(&desk.bus, "Your name?", NAME);
        desk.dunst.wait_displayed(&desk.conn, 1).await;
        let menu = desk.dunst.choose("decline").await;
        assert!(menu.contains(open), "{locale}: {menu}");
        assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_names_the_asker() {
    let desk = desk().await;
    let flags = elicit_tests::ASKER_FLAGS;
    let asked = elicit_tests::ask(&desk.bus, "Deploy now?", CONFIRM, &flags);
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    let menu = desk.dunst.choose("decline").await;
    assert!(
        menu.contains("#Decline (deployer (for release script) asks)"),
        "{menu}"
    );
    assert_eq!(printed(asked).await.1, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_form_is_notified_again() {
    let desk = desk_with_env(vec![("ELICIT_NOTIFY_RENOTIFY_AFTER", "1".into())]).await;
    let asked = ask(&desk.bus, "Deploy now?", CONFIRM);
    // Nobody answers: a second notification follows the first, and the
    // first is gone.
    eventually("a reminder", || async { desk.dunst.logged().len() >= 2 }).await;
    let logged = desk.dunst.logged();
    assert_ne!(logged[0].id, logged[1].id, "{logged:?}");
    assert_eq!(logged[0].summary, logged[1].summary, "{logged:?}");
    assert!(logged.iter().all(|l| l.urgency == "NORMAL"), "{logged:?}");
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    // The reminder answers as the first did.
    desk.dunst.choose("accept").await;
    assert_eq!(
        printed(asked).await,
        (json!({"action": "accept", "content": {}}), Some(0))
    );
    desk.dunst.wait_displayed(&desk.conn, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_near_its_deadline_is_notified_critically_and_closed_when_answered_elsewhere() {
    // No reminders: the second notification is the deadline's.
    let desk = desk_with_env(vec![("ELICIT_NOTIFY_RENOTIFY_AFTER", "0".into())]).await;
    // 62 s: the critical notification is due 2 s after the form comes.
    let flags = elicit_tests::ASKER_FLAGS;
    let mut flags = flags.to_vec();
    flags.extend(["--timeout", "62"]);
    let asked = elicit_tests::ask(&desk.bus, "Deploy now?", CONFIRM, &flags);
    eventually("the critical notification", || async {
        desk.dunst.logged().iter().any(|l| l.urgency == "CRITICAL")
    })
    .await;
    let logged = desk.dunst.logged();
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert_eq!(logged[0].urgency, "NORMAL", "{logged:?}");
    assert_eq!(logged[1].urgency, "CRITICAL", "{logged:?}");
    assert!(logged[1].summary.ends_with("asks"), "{logged:?}");
    desk.dunst.wait_displayed(&desk.conn, 1).await;
    // Refreshes the picture in docs/frontends.md:
    // ELICIT_NOTIFY_SCREENSHOT=$PWD/docs/notify-critical.png cargo test -p
    // elicit-tests --test notify -- critically
    if let Ok(target) = std::env::var("ELICIT_NOTIFY_SCREENSHOT") {
        // The screen, cut to what is drawn on it: the notification.
        let status = std::process::Command::new("import")
            .args([
                "-display",
                desk.dunst.display(),
                "-window",
                "root",
                "-trim",
                "+repage",
            ])
            .arg(&target)
            .status()
            .expect("import (imagemagick) runs");
        assert!(status.success() && std::fs::metadata(&target).is_ok_and(|m| m.len() > 1_000));
    }
    // Answered with `elicit answer` (it claims the form from
    // elicit-notify): the notification closes.
    let listed = forms(&desk.conn).await;
    let id = listed[0]["id"].to_string();
    let answered = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", desk.bus.address(), "answer", &id, "--decline"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("elicit answer runs");
    assert!(answered.status.success(), "{answered:?}");
    desk.dunst.wait_displayed(&desk.conn, 0).await;
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    assert_eq!(desk.dunst.logged().len(), 2, "no notification after the answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn do_not_disturb_lets_only_the_critical_notification_through() {
    let bus = PrivateBus::start();
    let server = FakeServer::start_inhibited(&bus, &["actions", "body"]).await;
    let _daemon = Daemon::start(&bus, CONFIG).await;
    let notify = Notify::start(&bus).await;
    let conn = bus.connect().await;
    // Plenty of time: the form is held without a notification.
    let quiet = ask(&bus, "Deploy now?", CONFIRM);
    eventually("elicit-notify to hold the form quietly", || async {
        notify.log().contains("Do Not Disturb is on")
    })
    .await;
    let listed = forms(&conn).await;
    assert_eq!(listed[0]["presented-to"], "notify", "{listed:?}");
    // Under a minute left: critical, through Do Not Disturb.
    let urgent = elicit_tests::ask(&bus, "Roll back?", CONFIRM, &["--timeout", "30"]);
    eventually("the critical notification", || async {
        !server.shown().is_empty()
    })
    .await;
    let shown = server.shown();
    assert_eq!(shown.len(), 1, "only the critical one: {shown:?}");
    assert_eq!(shown[0].urgency, Some(2), "{shown:?}");
    assert!(shown[0].body.starts_with("Roll back?"), "{shown:?}");
    server.invoke(&shown[0], "decline").await;
    assert_eq!(printed(urgent).await, (json!({"action": "decline"}), Some(3)));
    drop(quiet);
}
