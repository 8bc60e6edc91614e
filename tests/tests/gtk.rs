//! `elicit-gtk` end to end: the real binary under a private Xvfb, against
//! the real `elicitd` on a private bus, asked with `elicit ask`. The window
//! is read through the accessibility bus (AT-SPI, `tests/gtk/atspi.py` with
//! the system Python's pyatspi) and driven by AT-SPI actions (buttons)
//! and by keys sent with xdotool (typing, mnemonics, Enter,
//! Escape): GTK 4.8 has no AT-SPI EditableText, so text is typed.
//!
//! Every wait is for a condition, with a deadline: a text appearing in the
//! accessibility tree, a process ending, a file appearing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

#[path = "gtk/portal.rs"]
mod portal;
#[path = "gtk/watcher.rs"]
mod watcher;

use elicit_tests::procs::kill;
use elicit_tests::{Daemon, PrivateBus, TestFrontend, Xvfb, ask, binary, eventually, printed, within};
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type": "object", "properties": {
  "name": {"type": "string", "title": "Name", "minLength": 1},
  "email": {"type": "string", "title": "Email", "format": "email"},
  "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10},
  "agree": {"type": "boolean", "title": "Agree"},
  "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]}
}, "required": ["name", "count"]}"#;

/// The accessibility bus launcher, activatable on the private bus (the
/// packaged service file also names a systemd unit, which a private bus
/// cannot use).
const A11Y_SERVICE: &str = "[D-BUS Service]\nName=org.a11y.Bus\nExec=/usr/libexec/at-spi-bus-launcher\n";

/// A private desktop: X server, session bus with the accessibility bus,
/// elicitd, and elicit-gtk registered with it.
struct Desktop {
    gtk: Child,
    xvfb: Xvfb,
    daemon: Daemon,
    bus: PrivateBus,
    /// Where `xdg-open` records what it was asked to open.
    opened: PathBuf,
    /// The XDG_RUNTIME_DIR of everything on this desktop.
    runtime: PathBuf,
    /// The settings portal's connection, when there is one.
    portal: Option<zbus::Connection>,
    /// The status-notifier watcher (a tray's), when there is one.
    tray: Option<watcher::Watcher>,
    _services: tempfile::TempDir,
}

impl Desktop {
    async fn start() -> Desktop {
        Desktop::start_with_env(Vec::new()).await
    }

    /// As [`Desktop::start`], elicit-gtk running with `env` added (a
    /// language).
    async fn start_with_env(env: Vec<(&str, String)>) -> Desktop {
        Desktop::start_full(env, None, false).await
    }

    /// As [`Desktop::start`], with a status-notifier watcher on the bus
    /// first, as a desktop with a tray has at login.
    async fn start_with_tray() -> Desktop {
        Desktop::start_full(Vec::new(), None, true).await
    }

    /// As [`Desktop::start_with_env`], with a settings portal that says
    /// `color_scheme` (0 none, 1 dark, 2 light) on the bus first, and a
    /// status-notifier watcher when `tray`.
    async fn start_full(env: Vec<(&str, String)>, color_scheme: Option<u32>, tray: bool) -> Desktop {
        Desktop::start_configured(env, color_scheme, "", tray).await
    }

    /// As [`Desktop::start`], elicitd running with `config` (TOML).
    async fn start_with_config(config: &str) -> Desktop {
        Desktop::start_configured(Vec::new(), None, config, false).await
    }

    async fn start_configured(
        env: Vec<(&str, String)>,
        color_scheme: Option<u32>,
        config: &str,
        tray: bool,
    ) -> Desktop {
        let services = tempfile::tempdir().expect("temp dir");
        std::fs::write(services.path().join("org.a11y.Bus.service"), A11Y_SERVICE).expect("service file");
        // The accessibility bus launcher puts its socket in
        // XDG_RUNTIME_DIR: one per test, or parallel tests share a bus.
        let runtime = services.path().join("runtime");
        std::fs::create_dir(&runtime).expect("runtime dir");
        std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("chmod");
        let xvfb = Xvfb::start();
        let bus = PrivateBus::start_with_env(
            &format!("<servicedir>{}</servicedir>", services.path().display()),
            &[("XDG_RUNTIME_DIR", &runtime)],
        );
        let daemon = Daemon::start(&bus, config).await;
        let portal = match color_scheme {
            Some(scheme) => Some(portal::serve(&bus, scheme).await),
            None => None,
        };
        let tray = match tray {
            true => Some(watcher::Watcher::start(&bus).await),
            false => None,
        };
        // A recording `xdg-open` first on PATH: it proves when (and
        // whether) a URL was opened.
        let bin = bus.dir().join("bin");
        std::fs::create_dir(&bin).expect("bin dir");
        let opened = bus.dir().join("opened");
        let opener = bin.join("xdg-open");
        std::fs::write(
            &opener,
            format!("#!/bin/sh\necho \"$1\" >> '{}'\n", opened.display()),
        )
        .expect("opener");
        std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let log = std::fs::File::create(bus.dir().join("gtk.log")).expect("log");
        assert_ne!(
            std::env::var("GTK_A11Y").as_deref(),
            Ok("none"),
            "GTK_A11Y=none hides the window from AT-SPI"
        );
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let gtk = Command::new(binary("elicit-gtk"))
            .arg("--bus")
            .arg(bus.address())
            .env("DISPLAY", xvfb.display())
            .env("GDK_BACKEND", "x11")
            .env("GSK_RENDERER", "cairo")
            .env("GSETTINGS_BACKEND", "memory")
            .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
            .env("PATH", path)
            .env("LANG", "C.UTF-8")
            // The window's remembered size goes here, not to the user's.
            .env("XDG_STATE_HOME", services.path().join("state"))
            .envs(env)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env_remove("AT_SPI_BUS_ADDRESS")
            .env_remove("ELICIT_OPENER")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("elicit-gtk starts");
        let desktop = Desktop {
            gtk,
            xvfb,
            daemon,
            bus,
            opened,
            runtime,
            portal,
            tray,
            _services: services,
        };
        eventually("elicit-gtk to register", || async {
            desktop.log().contains("registered with elicitd")
        })
        .await;
        desktop
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.bus.dir().join("gtk.log")).unwrap_or_default()
    }

    /// elicit-gtk's tray item, once it registered with the watcher.
    async fn item(&self) -> watcher::Item {
        self.tray.as_ref().expect("a desktop with a tray").item().await
    }

    /// Runs the AT-SPI helper; its own deadline bounds every wait. A
    /// helper that only looks (not `click`) and died of a signal, which
    /// pyatspi does now and then on a loaded machine, before it said
    /// anything, is run once more.
    async fn atspi(&self, args: &[&str]) -> String {
        let mut output = self.atspi_once(args).await;
        let crashed = {
            use std::os::unix::process::ExitStatusExt;
            output.status.signal().is_some() && output.stderr.is_empty()
        };
        if crashed && args.first() != Some(&"click") {
            eprintln!("atspi.py {args:?} died ({}); once more", output.status);
            output = self.atspi_once(args).await;
        }
        assert!(
            output.status.success(),
            "atspi.py {args:?} failed ({}):\n{}\n---- elicit-gtk log ----\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            self.log()
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    async fn atspi_once(&self, args: &[&str]) -> std::process::Output {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("gtk/atspi.py");
        within(
            "the AT-SPI helper",
            tokio::process::Command::new("/usr/bin/python3")
                .arg(script)
                .args(args)
                .env("DBUS_SESSION_BUS_ADDRESS", self.bus.address())
                .env("DISPLAY", self.xvfb.display())
                .env("XDG_RUNTIME_DIR", &self.runtime)
                // Below the test's own deadline, so that the helper's
                // report of what it saw is not lost.
                .env("ATSPI_DEADLINE", "15")
                .env_remove("AT_SPI_BUS_ADDRESS")
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("python3 runs")
    }

    /// Waits until every text in `texts` shows in the window; returns the
    /// accessibility tree.
    async fn wait_for(&self, texts: &[&str]) -> String {
        let mut args = vec!["wait"];
        args.extend_from_slice(texts);
        self.atspi(&args).await
    }

    async fn wait_gone(&self, text: &str) {
        self.atspi(&["absent", text]).await;
    }

    /// The left edges of the widgets named `names`, in the window.
    async fn left_edges(&self, names: &[&str]) -> Vec<i64> {
        let mut args = vec!["x"];
        args.extend_from_slice(names);
        let out = self.atspi(&args).await;
        out.lines().map(|l| l.trim().parse().expect("a number")).collect()
    }

    /// The top and bottom edges of the widgets named `names`, in the
    /// window, and the window's height.
    async fn vertical_spans(&self, names: &[&str]) -> (Vec<(i64, i64)>, i64) {
        let mut args = vec!["y"];
        args.extend_from_slice(names);
        let out = self.atspi(&args).await;
        let mut lines: Vec<&str> = out.lines().collect();
        let height = lines
            .pop()
            .and_then(|h| h.trim().parse().ok())
            .expect("the window's height");
        let spans = lines
            .iter()
            .map(|l| {
                let mut edges = l.split(' ').map(|n| n.parse().expect("a number"));
                (edges.next().expect("top"), edges.next().expect("bottom"))
            })
            .collect();
        (spans, height)
    }

    /// Performs the action of the widget named `name` (a button's click).
    async fn click(&self, name: &str) {
        self.atspi(&["click", name]).await;
    }

    /// Waits until the check or radio buttons named `names` are on.
    async fn checked(&self, names: &[&str]) {
        let mut args = vec!["checked"];
        args.extend_from_slice(names);
        self.atspi(&args).await;
    }

    /// Runs xdotool on this display.
    async fn xdotool(&self, args: &[&str]) -> String {
        let output = within(
            "xdotool",
            tokio::process::Command::new("xdotool")
                .args(args)
                .env("DISPLAY", self.xvfb.display())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("xdotool runs");
        assert!(
            output.status.success(),
            "xdotool {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Gives the window titled `title` the keyboard focus (there is no
    /// window manager to do it) and returns its X id.
    async fn focus(&self, title: &str) -> String {
        let found = self
            .xdotool(&["search", "--sync", "--onlyvisible", "--name", title])
            .await;
        let window = found.lines().next().expect("a window").trim().to_owned();
        self.xdotool(&["windowfocus", "--sync", &window]).await;
        window
    }

    /// Presses keys (`alt+n`, `Return`, `Escape`…).
    async fn keys(&self, keys: &[&str]) {
        let mut args = vec!["key", "--clearmodifiers"];
        args.extend_from_slice(keys);
        self.xdotool(&args).await;
    }

    /// Types text into the focused widget.
    async fn type_text(&self, text: &str) {
        self.xdotool(&["type", "--delay", "20", text]).await;
    }

    fn opened(&self) -> Option<String> {
        std::fs::read_to_string(&self.opened).ok()
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = self.gtk.kill();
        let _ = self.gtk.wait();
        if std::thread::panicking() {
            eprintln!("---- elicit-gtk log ----\n{}---- end ----", self.log());
        }
    }
}

/// The window's title for `elicit ask` started by this test: the test
/// process is the asker.
fn title() -> String {
    format!("{} asks, for elicit ask", elicit_tests::asker_name())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_filled_in_and_accepted() {
    let desktop = Desktop::start().await;
    let asked = ask(&desktop.bus, "Who are you?", SCHEMA, &[]);
    let tree = desktop
        .wait_for(&[
            "Who are you?",
            "Name *",
            "Count *",
            "Fields marked * are required.",
        ])
        .await;
    assert!(tree.contains(&format!("[frame] {}", title())), "{tree}");
    assert!(
        tree.contains("whole number, 1-10"),
        "the hint is help text: {tree}"
    );
    desktop.focus(&title()).await;
    // The first field has the focus; the others are reached by their
    // mnemonics (Alt and the underlined letter).
    desktop.type_text("Ann").await;
    desktop.keys(&["alt+e"]).await;
    desktop.type_text("ann@example.com").await;
    desktop.keys(&["alt+u"]).await;
    desktop.type_text("7").await;
    // GTK 4.8 gives check and radio buttons no AT-SPI action: the Color
    // mnemonic picks the first choice, Down the next.
    desktop.keys(&["alt+g", "alt+r", "Down"]).await;
    // Keys are handled in order: once these show, the typing is in too.
    desktop.checked(&["Agree", "green"]).await;
    // Enter in an entry accepts the form (Accept is the default).
    desktop.keys(&["alt+n", "Return"]).await;
    let (answer, code) = printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content":
            {"name": "Ann", "email": "ann@example.com", "count": 7, "agree": true, "color": "green"}})
    );
    assert_eq!(code, Some(0));
    desktop.wait_gone("Who are you?").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_and_cancel() {
    let desktop = Desktop::start().await;
    let asked = ask(&desktop.bus, "First question", SCHEMA, &[]);
    desktop.wait_for(&["First question"]).await;
    desktop.click("Decline").await;
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    let asked = ask(&desktop.bus, "Second question", SCHEMA, &[]);
    desktop.wait_for(&["Second question"]).await;
    desktop.focus(&title()).await;
    desktop.type_text("Half typed").await;
    desktop.keys(&["Escape"]).await;
    assert_eq!(printed(asked).await, (json!({"action": "cancel"}), Some(4)));
    desktop.wait_gone("Second question").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_entry_is_shown_inline_and_nothing_is_sent() {
    let desktop = Desktop::start().await;
    let mut asked = ask(&desktop.bus, "Count something", SCHEMA, &[]);
    desktop.wait_for(&["Count something"]).await;
    desktop.focus(&title()).await;
    desktop.type_text("Ann").await;
    desktop.keys(&["alt+u"]).await;
    desktop.type_text("12").await;
    desktop.keys(&["Return"]).await;
    desktop
        .wait_for(&["Count must be at most 10", "1 problem to fix before sending."])
        .await;
    assert!(
        asked.try_wait().expect("elicit ask").is_none(),
        "nothing was sent"
    );
    let conn = desktop.bus.connect().await;
    let broker = elicit_proto::dbus::Broker1Proxy::new(&conn).await.expect("proxy");
    let forms = broker.list_forms().await.expect("forms");
    assert!(
        forms.contains("presented"),
        "the form is still presented: {forms}"
    );
    // Correcting the value clears the error as the user types.
    desktop.keys(&["ctrl+a"]).await;
    desktop.type_text("3").await;
    desktop.wait_gone("Count must be at most 10").await;
    desktop.wait_gone("problem to fix").await;
    desktop.keys(&["Return"]).await;
    let (answer, code) = printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"name": "Ann", "count": 3}})
    );
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_opens_only_after_the_click() {
    let desktop = Desktop::start().await;
    // A look-alike host is flagged, and declining opens nothing.
    let asked = ask(
        &desktop.bus,
        "Log in to pay",
        "https://xn--pypal-4ve.com/login",
        &[],
    );
    let tree = desktop
        .wait_for(&[
            "Log in to pay",
            "https://xn--pypal-4ve.com/login",
            "Open in browser",
        ])
        .await;
    assert!(tree.contains("the host is an international name"), "{tree}");
    assert!(tree.contains("mixes Latin and Cyrillic letters"), "{tree}");
    desktop.click("Decline").await;
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    assert_eq!(desktop.opened(), None, "declining opens nothing");

    let url = "https://example.com/oauth/authorize?state=1";
    let asked = ask(&desktop.bus, "Sign in", url, &[]);
    let tree = desktop
        .wait_for(&["Sign in", url, "Nothing has been opened."])
        .await;
    assert!(
        !tree.contains("Careful"),
        "a plain https URL needs no warning: {tree}"
    );
    // Enter is no consent: a URL-mode form has no default button.
    desktop.focus(&title()).await;
    desktop.keys(&["Return"]).await;
    assert_eq!(desktop.opened(), None, "nothing opens before the click");
    desktop.click("Open in browser").await;
    assert_eq!(printed(asked).await, (json!({"action": "accept"}), Some(0)));
    eventually("xdg-open to run", || async { desktop.opened().is_some() }).await;
    assert_eq!(desktop.opened().as_deref().map(str::trim), Some(url));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_form_leaves_a_notice() {
    let desktop = Desktop::start().await;
    // Withdrawn with another form waiting: the notice shows over it.
    let quick = ask(&desktop.bus, "Quick question", SCHEMA, &["--timeout", "3"]);
    desktop.wait_for(&["Quick question"]).await;
    let waiting = ask(&desktop.bus, "Still there?", SCHEMA, &[]);
    desktop.wait_for(&["Quick question", "1 more waiting"]).await;
    assert_eq!(printed(quick).await.0["action"], "cancel");
    let tree = desktop
        .wait_for(&[
            &format!("The request from {} timed out.", elicit_tests::asker_name()),
            "Still there?",
        ])
        .await;
    assert!(!tree.contains("Quick question"), "{tree}");
    desktop.click("Decline").await;
    assert_eq!(printed(waiting).await.0["action"], "decline");
    desktop.wait_gone("timed out").await;
    // Withdrawn with nothing behind it: the notice stands alone.
    let asked = ask(&desktop.bus, "Another quick one", SCHEMA, &["--timeout", "1"]);
    desktop.wait_for(&["Another quick one"]).await;
    assert_eq!(printed(asked).await.0["action"], "cancel");
    let tree = desktop
        .wait_for(&[
            &format!("The request from {} timed out.", elicit_tests::asker_name()),
            "Nothing is waiting for an answer.",
        ])
        .await;
    assert!(!tree.contains("Another quick one"), "{tree}");
    desktop.click("Close").await;
    desktop.wait_gone("timed out").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_wait_in_one_window_and_a_screenshot_is_taken() {
    let desktop = Desktop::start().await;
    let conn = desktop.bus.connect().await;
    let mut sessions = Vec::new();
    for (server, host, message) in [
        (
            "demo-contacts",
            "Claude Code",
            "Add a contact to your address book?",
        ),
        ("demo-deployer", "an IDE assistant", "Deploy to production?"),
    ] {
        let origin = elicit_proto::dbus::Origin {
            server: Some(server.into()),
            host: Some(host.into()),
            ..Default::default()
        };
        let session = elicit_client::ClientSession::open(&conn, &origin)
            .await
            .expect("a session");
        let schema: Value = serde_json::from_str(if server == "demo-contacts" {
            CONTACT
        } else {
            r#"{"type": "object", "properties": {}}"#
        })
        .expect("schema");
        let request = json!({"message": message, "requestedSchema": schema});
        let form = session
            .submit(&request.to_string(), None, None)
            .await
            .expect("submit");
        sessions.push((session, form));
        // The first form is shown before the second is asked, so the
        // order on screen is fixed.
        desktop.wait_for(&["Add a contact to your address book?"]).await;
    }
    desktop
        .wait_for(&["1 more waiting", "demo-contacts asks, for Claude Code"])
        .await;
    let window = desktop.focus("demo-contacts asks").await;
    desktop.type_text("Ada Lovelace").await;
    desktop.keys(&["alt+e"]).await;
    desktop.type_text("ada@example.com").await;
    // Favourite on: once it shows, the keys before it are handled too.
    desktop.keys(&["alt+g", "Down", "alt+f"]).await;
    desktop.checked(&["Friends", "Favourite"]).await;
    let shot = desktop.bus.dir().join("screenshot.png");
    let status = Command::new("import")
        .args(["-display", desktop.xvfb.display(), "-window", &window])
        .arg(&shot)
        .status()
        .expect("import (imagemagick) runs");
    assert!(status.success());
    assert!(std::fs::metadata(&shot).expect("a screenshot").len() > 5_000);
    // `frontends/gtk/screenshot.sh` sets this to refresh the README's picture.
    if let Ok(target) = std::env::var("ELICIT_GTK_SCREENSHOT") {
        std::fs::copy(&shot, target).expect("copy the screenshot");
    }
    // Answering the first brings the second, in the same window.
    desktop.keys(&["Escape"]).await;
    desktop
        .wait_for(&[
            "Deploy to production?",
            "demo-deployer asks, for an IDE assistant",
        ])
        .await;
    desktop.wait_gone("more waiting").await;
    desktop.click("Accept").await;
    let (mut first, form) = sessions.remove(0);
    let outcome = within("the first outcome", first.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "cancel");
    let (mut second, form) = sessions.remove(0);
    let outcome = within("the second outcome", second.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "accept");
}

const CONTACT: &str = r#"{"type": "object", "properties": {
  "name": {"type": "string", "title": "Name", "description": "As it should appear in the address book", "minLength": 1, "maxLength": 40},
  "email": {"type": "string", "title": "Email", "format": "email"},
  "birthday": {"type": "string", "title": "Birthday", "format": "date"},
  "group": {"type": "string", "title": "Group", "oneOf": [
    {"const": "family", "title": "Family"}, {"const": "friends", "title": "Friends"}, {"const": "work", "title": "Work"}]},
  "favourite": {"type": "boolean", "title": "Favourite", "default": false},
  "reminders": {"type": "array", "title": "Reminders", "items": {"type": "string", "enum": ["birthday", "anniversary"]}}
}, "required": ["name", "group"]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_registers_as_gtk_and_only_the_broker_may_show_forms() {
    let desktop = Desktop::start().await;
    assert!(
        desktop.daemon.log().contains("front-end registered frontend=gtk"),
        "{}",
        desktop.daemon.log()
    );
    let conn = desktop.bus.connect().await;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("bus proxy");
    let daemon_name = zbus::names::BusName::try_from(elicit_proto::dbus::BUS_NAME).expect("a name");
    let daemon = dbus
        .get_name_owner(daemon_name)
        .await
        .expect("elicitd owns its name");
    let me = conn.unique_name().map(|n| n.to_string()).unwrap_or_default();
    let forged = (
        "1",
        "forged",
        r#"{"message":"Your password?","requestedSchema":{"type":"object","properties":{}}}"#,
        elicit_proto::dbus::Dict::new(),
    );
    // elicit-gtk may hold more than one connection (GApplication, the
    // accessibility bridge): every peer is asked, and every one must refuse.
    let mut refusals = 0;
    for peer in dbus.list_names().await.expect("names") {
        let peer = peer.to_string();
        if !peer.starts_with(':') || peer == me || peer == daemon.as_str() {
            continue;
        }
        let reply = within(
            "a peer to answer a forged Show",
            conn.call_method(
                Some(peer.as_str()),
                "/dev/elicitd/frontend/gtk",
                Some("dev.elicitd.Frontend1"),
                "Show",
                &forged,
            ),
        )
        .await;
        match reply {
            Err(zbus::Error::MethodError(error, _, _))
                if error.as_str() == "org.freedesktop.DBus.Error.AccessDenied" =>
            {
                refusals += 1
            }
            Err(_) => {}
            Ok(_) => panic!("{peer} took a Show that did not come from elicitd"),
        }
    }
    assert_eq!(refusals, 1, "elicit-gtk's Frontend1 refuses the forged Show");
    desktop.wait_gone("Your password?").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_bus_ends_it_with_the_reason() {
    let xvfb = Xvfb::start();
    let missing = tempfile::tempdir().expect("temp dir");
    let address = format!("unix:path={}", missing.path().join("no-bus").display());
    let output = within(
        "elicit-gtk to give up",
        tokio::process::Command::new(binary("elicit-gtk"))
            .args(["--bus", &address])
            .env("DISPLAY", xvfb.display())
            .env("GDK_BACKEND", "x11")
            .env("GSK_RENDERER", "cairo")
            .env("GSETTINGS_BACKEND", "memory")
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("elicit-gtk runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("elicit-gtk: D-Bus: Failed to connect"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_speaks_german() {
    let desktop = Desktop::start_with_env(elicit_tests::language_env("de_DE.UTF-8")).await;
    let asked = ask(&desktop.bus, "Who are you?", SCHEMA, &[]);
    // The server's text as sent; elicitd's own words in German.
    let tree = desktop
        .wait_for(&[
            "Who are you?",
            "Name *",
            "Mit * markierte Felder sind erforderlich.",
            "Abbrechen",
            "Ablehnen",
            "Annehmen",
        ])
        .await;
    assert!(tree.contains("ganze Zahl, 1–10"), "{tree}");
    assert!(
        tree.contains("[frame] Ein unbenannter Server fragt für elicit ask") || tree.contains(" fragt für "),
        "{tree}"
    );
    desktop.click("Annehmen").await;
    desktop
        .wait_for(&["Vor dem Senden sind 2 Probleme zu beheben."])
        .await;
    desktop.click("Ablehnen").await;
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_speaks_french() {
    let desktop = Desktop::start_with_env(elicit_tests::language_env("fr_FR.UTF-8")).await;
    let asked = ask(&desktop.bus, "Who are you?", SCHEMA, &[]);
    desktop
        .wait_for(&[
            "Who are you?",
            "Les champs marqués d’un * sont obligatoires.",
            "Annuler",
            "Refuser",
            "Accepter",
            "nombre entier, de 1 à 10",
        ])
        .await;
    desktop.click("Annuler").await;
    assert_eq!(printed(asked).await, (json!({"action": "cancel"}), Some(4)));
}

/// In a right-to-left language the layout mirrors: the buttons, packed at
/// the end, run from the right in LTR and from the left in RTL.
///
/// GLib translates GTK's own strings, and so its "default:LTR" that sets
/// the direction, only for a program that has a catalogue in the user's
/// language (an English window is not mirrored). We ship no Hebrew one:
/// the test makes a catalogue with a header and no strings, so the
/// window mirrors and its words stay English (the fallback).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_right_to_left_language_mirrors_the_window() {
    let hebrew = tempfile::tempdir().expect("temp dir");
    let messages = hebrew.path().join("he/LC_MESSAGES");
    std::fs::create_dir_all(&messages).expect("mkdir");
    let po = hebrew.path().join("he.po");
    std::fs::write(
        &po,
        "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Language: he\\n\"\n",
    )
    .expect("write he.po");
    let compiled = Command::new("msgfmt")
        .arg("--output-file")
        .arg(messages.join("elicitd.mo"))
        .arg(&po)
        .status()
        .expect("msgfmt runs (the gettext package; run tests/setup)");
    assert!(compiled.success(), "msgfmt he.po");
    let mut env = elicit_tests::language_env("he_IL.UTF-8");
    env.retain(|(name, _)| *name != "ELICITD_LOCALEDIR");
    env.push(("ELICITD_LOCALEDIR", hebrew.path().display().to_string()));
    let order = |desktop: Desktop| async move {
        let asked = ask(&desktop.bus, "Which way?", SCHEMA, &[]);
        desktop.wait_for(&["Which way?", "Name *"]).await;
        let edges = desktop.left_edges(&["Cancel", "Accept"]).await;
        desktop.click("Cancel").await;
        assert_eq!(printed(asked).await.1, Some(4));
        edges
    };
    let ltr = order(Desktop::start().await).await;
    assert!(
        ltr[0] < ltr[1],
        "left to right, Accept is last, on the right: {ltr:?}"
    );
    let rtl = order(Desktop::start_with_env(env).await).await;
    assert!(
        rtl[0] > rtl[1],
        "right to left, Accept is last, on the left: {rtl:?}"
    );
}

/// `elicit ask --server --host --icon`: the title names the asker and the
/// header shows its icon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_title_and_icon_are_the_askers() {
    let desktop = Desktop::start().await;
    let flags = elicit_tests::ASKER_FLAGS;
    let asked = ask(&desktop.bus, "Deploy now?", SCHEMA, &flags);
    let tree = desktop.wait_for(&["Deploy now?", "Icon of deployer"]).await;
    assert!(
        tree.contains("[frame] deployer asks, for release script"),
        "{tree}"
    );
    desktop.click("Cancel").await;
    assert_eq!(printed(asked).await.1, Some(4));
}

/// The contact form as a German MCP server would send it.
const CONTACT_DE: &str = r#"{"type": "object", "properties": {
  "name": {"type": "string", "title": "Name", "description": "Wie er im Adressbuch stehen soll", "minLength": 1, "maxLength": 40},
  "email": {"type": "string", "title": "E-Mail", "format": "email"},
  "group": {"type": "string", "title": "Gruppe", "oneOf": [
    {"const": "family", "title": "Familie"}, {"const": "friends", "title": "Freunde"}, {"const": "work", "title": "Arbeit"}]},
  "favourite": {"type": "boolean", "title": "Favorit", "default": false},
  "reminders": {"type": "array", "title": "Erinnerungen", "items": {"type": "string", "enum": ["Geburtstag", "Jahrestag"]}, "maxItems": 2}
}, "required": ["name", "group"]}"#;

/// A form in German, captured for docs/frontends.md (`screenshot.sh` sets
/// `ELICIT_GTK_SCREENSHOT_DE`): elicitd's words from the catalogue, the
/// server's as it sent them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_german_form_is_captured() {
    let desktop = Desktop::start_with_env(elicit_tests::language_env("de_DE.UTF-8")).await;
    let conn = desktop.bus.connect().await;
    let origin = elicit_proto::dbus::Origin {
        server: Some("demo-contacts".into()),
        host: Some("Claude Code".into()),
        ..Default::default()
    };
    let session = elicit_client::ClientSession::open(&conn, &origin)
        .await
        .expect("a session");
    let schema: Value = serde_json::from_str(CONTACT_DE).expect("schema");
    let request = json!({"message": "Einen Kontakt zum Adressbuch hinzufügen?", "requestedSchema": schema});
    let form = session
        .submit(&request.to_string(), None, None)
        .await
        .expect("submit");
    desktop
        .wait_for(&[
            "demo-contacts fragt für Claude Code",
            "Mit * markierte Felder sind erforderlich.",
            "1–40 Zeichen",
            "höchstens 2 auswählen",
            "Annehmen",
        ])
        .await;
    let window = desktop.focus("demo-contacts fragt").await;
    desktop.type_text("Ada Lovelace").await;
    // The Gruppe mnemonic picks the first choice. Keys are handled in
    // order: once Familie is on, the name is typed.
    desktop.keys(&["alt+g"]).await;
    desktop.checked(&["Familie Gruppe *"]).await;
    let shot = desktop.bus.dir().join("screenshot-de.png");
    let status = Command::new("import")
        .args(["-display", desktop.xvfb.display(), "-window", &window])
        .arg(&shot)
        .status()
        .expect("import (imagemagick) runs");
    assert!(status.success());
    if let Ok(target) = std::env::var("ELICIT_GTK_SCREENSHOT_DE") {
        std::fs::copy(&shot, target).expect("copy the screenshot");
    }
    desktop.click("Abbrechen").await;
    let mut session = session;
    let outcome = within("the outcome", session.wait(&form))
        .await
        .expect("an outcome");
    assert_eq!(outcome.action, "cancel");
}

/// The window opens at the size remembered in
/// `$XDG_STATE_HOME/elicitd/elicit-gtk.ini`, and writes its size there when
/// it hides. (Resizing by hand needs a window manager, which the test
/// desktop has not: GTK keeps the size the user chose as the window's
/// default size, which is what is written.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_size_is_remembered() {
    let state = tempfile::tempdir().expect("temp dir");
    let remembered = state.path().join("elicitd/elicit-gtk.ini");
    std::fs::create_dir_all(remembered.parent().expect("a folder")).expect("mkdir");
    std::fs::write(&remembered, "[window]\nwidth=700\nheight=640\n").expect("write the size");
    let desktop = Desktop::start_with_env(vec![("XDG_STATE_HOME", state.path().display().to_string())]).await;
    let asked = ask(&desktop.bus, "Same size?", SCHEMA, &[]);
    desktop.wait_for(&["Same size?"]).await;
    let window = desktop.focus(&title()).await;
    let geometry = desktop.xdotool(&["getwindowgeometry", &window]).await;
    assert!(geometry.contains("Geometry: 700x640"), "{geometry}");
    std::fs::remove_file(&remembered).expect("remove the size");
    desktop.keys(&["Escape"]).await;
    assert_eq!(printed(asked).await.1, Some(4));
    // Nothing left to show: the window hides and writes its size.
    eventually("the size to be written", || async {
        std::fs::read_to_string(&remembered)
            .is_ok_and(|t| t.contains("width=700") && t.contains("height=640"))
    })
    .await;
}

/// Keyboard only: the first field has the focus, Tab goes through every
/// field in order, Enter accepts; on the next form Escape cancels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyboard_alone_fills_in_accepts_and_cancels() {
    const ORDER: &str = r#"{"type": "object", "properties": {
      "agree": {"type": "boolean", "title": "Agree"},
      "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]},
      "email": {"type": "string", "title": "Email", "format": "email"},
      "name": {"type": "string", "title": "Name", "minLength": 1}
    }, "required": ["name"]}"#;
    let desktop = Desktop::start().await;
    let asked = ask(&desktop.bus, "Keys only", ORDER, &[]);
    desktop.wait_for(&["Keys only"]).await;
    desktop.focus(&title()).await;
    // Agree (focused first); Tab to Color, where "No answer" (an optional
    // choice) is on and Up picks the one above it; Tab, Email; Tab, Name.
    desktop.keys(&["space", "Tab", "Up", "Tab"]).await;
    desktop.type_text("ann@example.com").await;
    desktop.keys(&["Tab"]).await;
    desktop.type_text("Ann").await;
    desktop.keys(&["Return"]).await;
    assert_eq!(
        printed(asked).await,
        (
            json!({"action": "accept", "content": {"agree": true, "color": "blue", "email": "ann@example.com", "name": "Ann"}}),
            Some(0)
        )
    );
    let asked = ask(&desktop.bus, "Keys again", ORDER, &[]);
    desktop.wait_for(&["Keys again"]).await;
    desktop.focus(&title()).await;
    desktop.keys(&["Tab", "Tab", "Escape"]).await;
    assert_eq!(printed(asked).await, (json!({"action": "cancel"}), Some(4)));
}

/// Captures the window and returns its mean brightness (0 black, 1 white).
async fn brightness(desktop: &Desktop, window: &str) -> f64 {
    let shot = desktop.bus.dir().join("brightness.png");
    let status = Command::new("import")
        .args(["-display", desktop.xvfb.display(), "-window", window])
        .arg(&shot)
        .status()
        .expect("import (imagemagick) runs");
    assert!(status.success());
    let mean = Command::new("convert")
        .arg(&shot)
        .args(["-colorspace", "Gray", "-format", "%[fx:mean]", "info:"])
        .output()
        .expect("convert (imagemagick) runs");
    String::from_utf8_lossy(&mean.stdout)
        .trim()
        .parse()
        .expect("a mean")
}

/// The window follows the desktop's dark or light preference from the
/// settings portal, at start and when it changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_follows_the_portals_dark_preference() {
    let desktop = Desktop::start_full(Vec::new(), Some(1), false).await;
    let asked = ask(&desktop.bus, "Dark or light?", SCHEMA, &[]);
    desktop.wait_for(&["Dark or light?"]).await;
    let window = desktop.focus(&title()).await;
    eventually("a dark window", || async {
        brightness(&desktop, &window).await < 0.4
    })
    .await;
    let portal = desktop.portal.as_ref().expect("the portal");
    portal::change(portal, 2).await;
    eventually("a light window", || async {
        brightness(&desktop, &window).await > 0.6
    })
    .await;
    desktop.keys(&["Escape"]).await;
    assert_eq!(printed(asked).await.1, Some(4));
}

/// Waits up to 2 s for `condition`: the tray's promise to the user.
async fn within_two_seconds<F, Fut>(what: &str, condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    elicit_tests::eventually_within(std::time::Duration::from_secs(2), what, condition).await;
}

/// Shows the tray in a real tray host (gtk-sni-tray-standalone, a bar
/// along the bottom of the screen), opens the item's menu as a user does
/// (a right click on its icon, at the bar's end) and captures it.
async fn tray_screenshot(desktop: &Desktop, target: &str) {
    let mut host = tokio::process::Command::new("gtk-sni-tray-standalone")
        .args(["--bottom", "--end"])
        .env("DISPLAY", desktop.xvfb.display())
        .env("GDK_BACKEND", "x11")
        .env("DBUS_SESSION_BUS_ADDRESS", desktop.bus.address())
        .env("XDG_RUNTIME_DIR", &desktop.runtime)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("gtk-sni-tray-standalone starts (install haskell-gtk-sni-tray-utils)");
    desktop
        .xdotool(&[
            "search",
            "--sync",
            "--onlyvisible",
            "--name",
            "gtk-sni-tray-standalone",
        ])
        .await;
    let shot = desktop.bus.dir().join("tray.png");
    // The icon shows once the host has read the item; the menu opens once
    // it is there: click until a menu window maps.
    eventually("the tray's menu to open", || async {
        desktop.xdotool(&["mousemove", "1264", "785", "click", "3"]).await;
        let windows = desktop.xdotool(&["search", "--onlyvisible", "--name", ""]).await;
        let mut menu = false;
        for window in windows.lines() {
            let geometry = desktop.xdotool(&["getwindowgeometry", window]).await;
            // A popup above the bar, not the bar, the window or the root.
            menu |= geometry.contains("Position: ") && !geometry.contains(",770 ") && {
                let y: i64 = geometry
                    .split("Position: ")
                    .nth(1)
                    .and_then(|p| p.split(',').nth(1))
                    .and_then(|p| p.split_whitespace().next())
                    .and_then(|y| y.parse().ok())
                    .unwrap_or(0);
                y > 400
            };
        }
        menu
    })
    .await;
    let status = Command::new("import")
        .args([
            "-display",
            desktop.xvfb.display(),
            "-window",
            "root",
            "-crop",
            "700x260+580+540",
            "+repage",
            "-trim",
            "+repage",
        ])
        .arg(&shot)
        .status()
        .expect("import (imagemagick) runs");
    assert!(status.success());
    std::fs::copy(&shot, target).expect("copy the screenshot");
    let _ = host.kill().await;
}

/// How many forms the broker holds, waiting or shown.
async fn listed(bus: &PrivateBus) -> usize {
    let conn = bus.connect().await;
    let broker = elicit_proto::dbus::Broker1Proxy::new(&conn).await.expect("proxy");
    let json = broker.list_forms().await.expect("ListForms");
    serde_json::from_str::<Vec<Value>>(&json).expect("JSON").len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tray_counts_the_forms_and_opens_the_chosen_one() {
    let desktop = Desktop::start_with_tray().await;
    let item = desktop.item().await;
    eventually("the item to be passive", || async {
        item.status().await == "Passive"
    })
    .await;
    assert_eq!(item.title().await, "No form waiting");
    let first = ask(
        &desktop.bus,
        "First question?",
        SCHEMA,
        &["--server", "deployer", "--host", "Claude Code"],
    );
    eventually("the first form", || async { listed(&desktop.bus).await == 1 }).await;
    within_two_seconds("the item needs attention", || async {
        item.status().await == "NeedsAttention"
    })
    .await;
    let second = ask(
        &desktop.bus,
        "Second question?",
        SCHEMA,
        &["--server", "linter", "--host", "Codex"],
    );
    eventually("the second form", || async { listed(&desktop.bus).await == 2 }).await;
    within_two_seconds("the item counts two forms", || async {
        item.title().await.starts_with("2 forms waiting: ")
    })
    .await;
    assert_eq!(
        item.title().await,
        "2 forms waiting: deployer for Claude Code, linter for Codex"
    );
    // Refreshes the picture in docs/frontends.md (needs
    // haskell-gtk-sni-tray-utils): ELICIT_TRAY_SCREENSHOT=$PWD/docs/tray-menu.png
    // cargo test -p elicit-tests --test gtk -- tray_counts
    if let Ok(target) = std::env::var("ELICIT_TRAY_SCREENSHOT") {
        tray_screenshot(&desktop, &target).await;
    }
    let menu = item.menu_items().await;
    assert_eq!(menu.len(), 2, "{menu:?}");
    assert_eq!(menu[0].1, "deployer for Claude Code: First question?", "{menu:?}");
    assert_eq!(menu[1].1, "linter for Codex: Second question?", "{menu:?}");
    // The window shows the first; the menu brings the second to it.
    desktop.wait_for(&["First question?"]).await;
    item.click("Second question?").await;
    desktop.wait_for(&["Second question?"]).await;
    desktop.click("Decline").await;
    assert_eq!(printed(second).await, (json!({"action": "decline"}), Some(3)));
    desktop.wait_for(&["First question?"]).await;
    desktop.click("Decline").await;
    assert_eq!(printed(first).await, (json!({"action": "decline"}), Some(3)));
    eventually("no form left", || async { listed(&desktop.bus).await == 0 }).await;
    within_two_seconds("the item is passive again", || async {
        item.status().await == "Passive"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_copy_leaves_the_first_running() {
    let desktop = Desktop::start().await;
    let second = within(
        "the second elicit-gtk to end",
        tokio::process::Command::new(binary("elicit-gtk"))
            .arg("--bus")
            .arg(desktop.bus.address())
            .env("DISPLAY", desktop.xvfb.display())
            .env("GDK_BACKEND", "x11")
            .env("GSETTINGS_BACKEND", "memory")
            .env("DBUS_SESSION_BUS_ADDRESS", desktop.bus.address())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("elicit-gtk runs");
    assert!(second.status.success(), "{second:?}");
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("runs already"), "{said}");
    assert!(!said.contains("registered with elicitd"), "{said}");
    // The first still shows forms.
    let asked = ask(&desktop.bus, "Still there?", SCHEMA, &[]);
    desktop.wait_for(&["Still there?"]).await;
    desktop.click("Decline").await;
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_companion_outlives_the_daemon_and_serves_the_next_one() {
    let mut desktop = Desktop::start().await;
    // The tray comes after elicit-gtk, as when a panel restarts.
    let tray = watcher::Watcher::start(&desktop.bus).await;
    let item = tray.item().await;
    // The daemon exits cleanly (as at an idle exit), and a new one comes.
    assert!(desktop.daemon.terminate().is_some(), "elicitd did not exit");
    desktop.daemon.restart().await;
    assert!(
        desktop.gtk.try_wait().expect("elicit-gtk's status").is_none(),
        "elicit-gtk ended with the daemon:\n{}",
        desktop.log()
    );
    eventually("elicit-gtk to register with the new daemon", || async {
        desktop.daemon.log().contains("front-end registered frontend=gtk")
    })
    .await;
    let asked = ask(&desktop.bus, "After the restart?", SCHEMA, &[]);
    eventually("the form", || async { listed(&desktop.bus).await == 1 }).await;
    within_two_seconds("the item needs attention", || async {
        item.status().await == "NeedsAttention"
    })
    .await;
    desktop.wait_for(&["After the restart?"]).await;
    desktop.click("Decline").await;
    assert_eq!(printed(asked).await, (json!({"action": "decline"}), Some(3)));
    within_two_seconds("the item is passive again", || async {
        item.status().await == "Passive"
    })
    .await;
}

/// Issue 39 item 6: a message that imitates the consent, padded with 60
/// newlines, cannot push the real address out of view: the address, its
/// 240-character host and the warnings are pinned under the scrolled
/// message, inside the window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_message_cannot_push_the_url_consent_out_of_view() {
    let desktop = Desktop::start().await;
    let labels = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(30)];
    let url = format!("https://{}.xn--pypal-4ve.com/login", labels.join("."));
    let unicode = format!("{}.p\u{430}ypal.com", labels.join("."));
    let fake = format!(
        "It asks you to open this address in your browser:\nhttps://accounts.google.com/signin\nSite: accounts.google.com{}",
        "\n".repeat(60)
    );
    let asked = ask(&desktop.bus, &fake, &url, &[]);
    desktop.wait_for(&[&url, "Open in browser"]).await;
    let site = format!("Site: {unicode}");
    let warning = format!("Careful: the host is an international name that reads as “{unicode}”.");
    let (spans, height) = desktop.vertical_spans(&[&url, &site, &warning]).await;
    for ((top, bottom), name) in spans.iter().zip([&url, &site, &warning]) {
        assert!(
            *top >= 0 && *bottom <= height,
            "{name:?} spans {top}..{bottom}, outside the window's 0..{height}"
        );
    }
    desktop.click("Decline").await;
    assert_eq!(printed(asked).await.0, json!({"action": "decline"}));
}

/// Issue 39 item 5: elicit-gtk stopped (SIGSTOP) past show-timeout-ms
/// loses its form to another front-end; after SIGCONT it does not show it
/// stale, is counted again, and later forms reach it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_window_loses_its_form_shows_nothing_stale_and_comes_back() {
    let desktop = Desktop::start_with_config("[broker]\nshow-timeout-ms = 800\n").await;
    let mut other = TestFrontend::register(&desktop.bus, "script", 0).await;
    let frontends = |f: &TestFrontend| {
        let broker = f.broker();
        async move { broker.frontends().await.expect("Frontends") }
    };
    assert_eq!(frontends(&other).await, 2);
    let gtk = desktop.gtk.id();
    kill("-STOP", gtk);
    let asked = ask(&desktop.bus, "Asked while the window sleeps", SCHEMA, &[]);
    let shown = other.next_show().await;
    assert_eq!(shown.request["message"], "Asked while the window sleeps");
    assert_eq!(frontends(&other).await, 1, "the stopped window is set aside");
    kill("-CONT", gtk);
    let resumed = std::time::Instant::now();
    eventually("elicit-gtk to count again", || async {
        frontends(&other).await == 2
    })
    .await;
    eprintln!(
        "elicit-gtk was counted again {} ms after SIGCONT",
        resumed.elapsed().as_millis()
    );
    let tree = desktop.atspi(&["dump"]).await;
    assert!(
        !tree.contains("Asked while the window sleeps"),
        "shown stale:\n{tree}"
    );
    other
        .answer(&shown, "decline", Value::Null)
        .await
        .expect("decline");
    assert_eq!(printed(asked).await.0, json!({"action": "decline"}));
    drop(other);
    let asked = ask(&desktop.bus, "Asked once it is back", SCHEMA, &[]);
    let tree = desktop.wait_for(&["Asked once it is back"]).await;
    assert!(!tree.contains("Asked while the window sleeps"), "{tree}");
    desktop.click("Cancel").await;
    assert_eq!(printed(asked).await.0, json!({"action": "cancel"}));
}
