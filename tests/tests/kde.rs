//! KDE Plasma for real: Debian 12's plasmashell 5.27 (its notification
//! server and its system tray) and kded5's status-notifier watcher, on a
//! private Xvfb and a private bus (`kde/plasma.rs`), with the real
//! `elicitd`, `elicit-notify` and `elicit-gtk`, asked with `elicit ask`.
//!
//! Plasma's server is driven through its own D-Bus method,
//! `org.kde.NotificationManager.InvokeAction`, the one KDE Connect uses
//! to click a notification's button from a phone: the server then emits
//! `ActionInvoked` itself, exactly as for a click on its popup. What
//! crosses the bus is read by a bus monitor (`kde/traffic.rs`). Every
//! wait is for a condition, with a deadline; a missing KDE part fails the
//! test naming its package.

#[path = "kde/plasma.rs"]
mod plasma;
#[path = "kde/traffic.rs"]
mod traffic;
// Shared with gtk.rs, which uses the parts this file does not.
#[allow(dead_code)]
#[path = "gtk/watcher.rs"]
mod watcher;

use std::process::Stdio;
use std::time::Duration;

use elicit_tests::{Daemon, PrivateBus, binary, eventually, list_forms, printed};
use serde_json::json;

use plasma::Plasma;
use traffic::{Notified, Traffic};

const CONFIRM: &str = r#"{"type": "object", "properties": {}}"#;

/// Notifications first; nothing else answers.
const CONFIG: &str = "[frontends]\npreference = [\"notify\"]\n";

/// The notification server's name, path and KDE's own interface.
const NOTIFICATIONS: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const KDE_MANAGER: &str = "org.kde.NotificationManager";

/// Plasma, elicitd and elicit-notify on one private bus, and a monitor.
struct Desk {
    plasma: Plasma,
    traffic: Traffic,
    _daemon: Daemon,
    notify: tokio::process::Child,
    notify_log: std::path::PathBuf,
    conn: zbus::Connection,
    bus: PrivateBus,
}

async fn desk() -> Desk {
    let bus = PrivateBus::start();
    let plasma = Plasma::start(&bus).await;
    let traffic = Traffic::watch(&bus).await;
    let daemon = Daemon::start(&bus, CONFIG).await;
    let (notify, notify_log) = elicit_tests::notify::start(&bus, Vec::new()).await;
    let conn = bus.connect().await;
    Desk {
        plasma,
        traffic,
        _daemon: daemon,
        notify,
        notify_log,
        conn,
        bus,
    }
}

impl Desk {
    /// Waits for the `count`th notification Plasma accepted (it answered
    /// `Notify` with an id) and returns it.
    async fn notified(&self, count: usize) -> Notified {
        eventually("Plasma to take the notification", || async {
            let notified = self.traffic.notified();
            notified.len() >= count && notified[count - 1].id.is_some()
        })
        .await;
        self.traffic.notified()[count - 1].clone()
    }

    /// Presses the action `key` of notification `id` through Plasma's own
    /// `InvokeAction`.
    async fn invoke(&self, id: u32, key: &str) {
        self.conn
            .call_method(
                Some(NOTIFICATIONS),
                PATH,
                Some(KDE_MANAGER),
                "InvokeAction",
                &(id, key),
            )
            .await
            .expect("Plasma's InvokeAction");
    }

    /// Waits for Plasma to report notification `id` closed.
    async fn wait_closed(&self, id: u32) {
        let server = self.plasma.notification_server().await;
        eventually("Plasma to close the notification", || async {
            self.traffic
                .closed()
                .iter()
                .any(|c| c.id == id && c.sender == server)
        })
        .await;
    }

    fn notify_log(&self) -> String {
        std::fs::read_to_string(&self.notify_log).unwrap_or_default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plasma_shows_the_form_with_its_actions_and_its_button_answers_it() {
    let desk = desk().await;
    let asked = elicit_tests::ask(&desk.bus, "Deploy now?", CONFIRM, &[]);
    let shown = desk.notified(1).await;
    assert_eq!(shown.keys(), ["accept", "decline"], "{shown:?}");
    assert!(shown.summary.ends_with("asks"), "{shown:?}");
    assert!(shown.body.starts_with("Deploy now?"), "{shown:?}");
    assert_eq!(shown.urgency, Some(1), "{shown:?}");
    let dbus = zbus::fdo::DBusProxy::new(&desk.conn).await.expect("proxy");
    let sender = zbus::names::BusName::try_from(shown.sender.as_str()).expect("a bus name");
    assert_eq!(
        dbus.get_connection_unix_process_id(sender).await.ok(),
        desk.notify.id(),
        "the notification is elicit-notify's"
    );
    let id = shown.id.expect("an id");
    desk.invoke(id, "accept").await;
    assert_eq!(
        printed(asked).await,
        (json!({"action": "accept", "content": {}}), Some(0))
    );
    // It was Plasma that reported the press, and the notification is gone.
    let server = desk.plasma.notification_server().await;
    let invoked = desk.traffic.invoked();
    assert!(
        invoked
            .iter()
            .any(|i| i.id == id && i.detail == "accept" && i.sender == server),
        "{invoked:?}"
    );
    desk.wait_closed(id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_or_answered_form_closes_its_plasma_notification() {
    let desk = desk().await;
    // Withdrawn: the asking client goes away.
    let mut asked = elicit_tests::ask(&desk.bus, "Deploy now?", CONFIRM, &[]);
    let first = desk.notified(1).await;
    asked.kill().await.expect("kill elicit ask");
    desk.wait_closed(first.id.expect("an id")).await;
    eventually("the form to be gone", || async {
        list_forms(&desk.conn).await.is_empty()
    })
    .await;
    // Answered elsewhere: `elicit answer` claims it from elicit-notify.
    let asked = elicit_tests::ask(&desk.bus, "Roll back?", CONFIRM, &[]);
    let second = desk.notified(2).await;
    let id = list_forms(&desk.conn).await[0]["id"].to_string();
    let answered = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", desk.bus.address(), "answer", &id, "--decline"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("elicit answer runs");
    assert!(answered.status.success(), "{answered:?}");
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    desk.wait_closed(second.id.expect("an id")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plasma_do_not_disturb_holds_a_normal_notification_back() {
    let desk = desk().await;
    // Do Not Disturb as a presentation program asks Plasma for it; it
    // lasts while this connection does.
    let inhibitor = desk.bus.connect().await;
    let hints: std::collections::HashMap<&str, zbus::zvariant::Value<'_>> = Default::default();
    let cookie: u32 = inhibitor
        .call_method(
            Some(NOTIFICATIONS),
            PATH,
            Some(NOTIFICATIONS),
            "Inhibit",
            &("elicit-tests", "a test of Do Not Disturb", hints),
        )
        .await
        .expect("Plasma's Inhibit")
        .body()
        .deserialize()
        .expect("a cookie");
    let inhibited = zbus::fdo::PropertiesProxy::builder(&desk.conn)
        .destination(NOTIFICATIONS)
        .and_then(|b| b.path(PATH))
        .expect("a properties proxy")
        .build()
        .await
        .expect("a properties proxy");
    eventually("Plasma to say it is inhibited", || async {
        let Ok(interface) = zbus::names::InterfaceName::try_from(NOTIFICATIONS) else {
            return false;
        };
        inhibited
            .get(interface, "Inhibited")
            .await
            .ok()
            .and_then(|v| bool::try_from(v).ok())
            == Some(true)
    })
    .await;
    // Plenty of time: held back, only counted.
    let quiet = elicit_tests::ask(&desk.bus, "Deploy now?", CONFIRM, &[]);
    eventually("elicit-notify to hold the form quietly", || async {
        desk.notify_log().contains("Do Not Disturb is on")
    })
    .await;
    let listed = list_forms(&desk.conn).await;
    assert_eq!(listed[0]["presented-to"], "notify", "{listed:?}");
    assert!(
        desk.traffic.notified().is_empty(),
        "{:?}",
        desk.traffic.notified()
    );
    // Under a minute left: critical, through Do Not Disturb.
    let mut flags = elicit_tests::ASKER_FLAGS.to_vec();
    flags.extend(["--timeout", "30"]);
    let urgent = elicit_tests::ask(&desk.bus, "Roll back?", CONFIRM, &flags);
    let shown = desk.notified(1).await;
    assert_eq!(shown.urgency, Some(2), "{shown:?}");
    assert!(shown.body.starts_with("Roll back?"), "{shown:?}");
    assert_eq!(desk.traffic.notified().len(), 1, "only the critical one");
    // Refreshes the picture in docs/frontends.md:
    // ELICIT_PLASMA_SCREENSHOT=$PWD/docs/plasma-critical.png cargo test -p
    // elicit-tests --test kde -- do_not_disturb
    if let Ok(target) = std::env::var("ELICIT_PLASMA_SCREENSHOT") {
        desk.plasma.screenshot_popup(&target).await;
    }
    desk.invoke(shown.id.expect("an id"), "decline").await;
    assert_eq!(printed(urgent).await, (json!({"action": "decline"}), Some(3)));
    // Do Not Disturb ends: the next form is notified as usual.
    inhibitor
        .call_method(
            Some(NOTIFICATIONS),
            PATH,
            Some(NOTIFICATIONS),
            "UnInhibit",
            &(cookie,),
        )
        .await
        .expect("Plasma's UnInhibit");
    let after = elicit_tests::ask(&desk.bus, "And now?", CONFIRM, &[]);
    let shown = desk.notified(2).await;
    assert_eq!(shown.urgency, Some(1), "{shown:?}");
    desk.invoke(shown.id.expect("an id"), "accept").await;
    assert_eq!(
        printed(after).await,
        (json!({"action": "accept", "content": {}}), Some(0))
    );
    drop(quiet);
}

/// Waits up to 2 s for `condition`: the tray's promise to the user.
async fn within_two_seconds<F, Fut>(what: &str, condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    elicit_tests::eventually_within(Duration::from_secs(2), what, condition).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tray_item_registers_with_kdes_watcher_and_asks_for_attention() {
    let bus = PrivateBus::start();
    let plasma = Plasma::start(&bus).await;
    let traffic = Traffic::watch(&bus).await;
    let _daemon = Daemon::start(&bus, "").await;
    let runtime = tempfile::tempdir().expect("runtime dir");
    let log = bus.dir().join("gtk.log");
    let gtk = tokio::process::Command::new(binary("elicit-gtk"))
        .arg("--bus")
        .arg(bus.address())
        .env("DISPLAY", plasma.display())
        .env("GDK_BACKEND", "x11")
        .env("GSK_RENDERER", "cairo")
        .env("GSETTINGS_BACKEND", "memory")
        .env("GTK_A11Y", "none")
        .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
        .env("LANG", "C.UTF-8")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("XDG_STATE_HOME", runtime.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .kill_on_drop(true)
        .spawn()
        .expect("elicit-gtk starts");
    // KDE's watcher (kded5's, not one this test started) lists the item.
    let watcher = watcher::Watcher::attach(&bus, None).await;
    let item = watcher.item().await;
    let registered = watcher.registered().await;
    assert_eq!(registered.len(), 1, "{registered:?}");
    let conn = bus.connect().await;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("proxy");
    let owner = |name: String| {
        let dbus = dbus.clone();
        async move {
            let name = zbus::names::BusName::try_from(name).ok()?;
            dbus.get_name_owner(name).await.ok().map(|o| o.to_string())
        }
    };
    // The watcher is kded5's, and the item is elicit-gtk's.
    assert_eq!(
        owner("org.kde.StatusNotifierWatcher".into()).await,
        Some(plasma.watcher().await)
    );
    let item_bus = registered[0].split('/').next().unwrap_or_default().to_owned();
    let gtk_pid = dbus
        .get_connection_unix_process_id(
            zbus::names::BusName::try_from(item_bus.as_str()).expect("a bus name"),
        )
        .await
        .expect("the item's process");
    assert_eq!(Some(gtk_pid), gtk.id(), "{registered:?}");
    // plasmashell's system tray, told by the watcher, reads the item.
    let shell = plasma.shell().await;
    eventually("plasmashell's tray to read the item", || async {
        traffic.reads(&shell, &item_bus, "org.kde.StatusNotifierItem") > 0
    })
    .await;
    eventually("the item to be passive", || async {
        item.status().await == "Passive"
    })
    .await;
    let asked = elicit_tests::ask(&bus, "Deploy now?", CONFIRM, &[]);
    eventually("the form", || async { list_forms(&conn).await.len() == 1 }).await;
    within_two_seconds("the item needs attention", || async {
        item.status().await == "NeedsAttention"
    })
    .await;
    let id = list_forms(&conn).await[0]["id"].to_string();
    let answered = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "answer", &id, "--decline"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("elicit answer runs");
    assert!(answered.status.success(), "{answered:?}");
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    within_two_seconds("the item is passive again", || async {
        item.status().await == "Passive"
    })
    .await;
}
