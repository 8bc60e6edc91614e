//! Issue 37, "no config at all": a daemon with an empty config shows the
//! first form on its own. On a display it starts the GTK window where
//! `elicit-gtk` is installed, else `elicit-notify` where a notification
//! server with actions runs (dunst under Xvfb); without a display the
//! host hears, through `elicit proxy`, where to answer, and `elicit
//! status` says that no front-end runs. Also `elicit ask --message`
//! alone (a confirmation).
//!
//! "Installed" is the daemon's `PATH`: a folder holding only the
//! front-end under test.

#[path = "notify/dunst.rs"]
#[allow(dead_code)]
mod dunst;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use elicit_tests::home::{Home, Reaper, owner_pid};
use elicit_tests::mcp::{Host, fake};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, Xvfb, asker_name, binary, eventually, printed, within};
use serde_json::{Value, json};

use dunst::Dunst;

/// How soon the form must be on screen after `elicit ask` starts.
const ON_SCREEN: Duration = Duration::from_secs(3);

/// A folder holding only `names`, links to this build's binaries: the
/// daemon's whole `PATH`, so that only they count as installed.
fn installed(dir: &Path, names: &[&str]) -> PathBuf {
    let bin = dir.join("installed");
    std::fs::create_dir(&bin).expect("bin dir");
    for name in names {
        std::os::unix::fs::symlink(binary(name), bin.join(name)).expect("link");
    }
    bin
}

/// `elicit ask --message MESSAGE` and nothing else: a confirmation.
fn confirm(bus: &PrivateBus, message: &str) -> tokio::process::Child {
    tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "ask", "--message", message])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit ask starts")
}

/// Whether a viewable (mapped) window titled `title` is on `display`.
async fn window_shown(display: &str, title: &str) -> bool {
    tokio::process::Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", title])
        .env("DISPLAY", display)
        .stderr(Stdio::null())
        .output()
        .await
        .expect("xdotool runs (install the xdotool package)")
        .status
        .success()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_config_the_daemon_starts_the_gtk_window_on_a_display() {
    let bus = PrivateBus::start();
    let xvfb = Xvfb::start();
    let bin = installed(bus.dir(), &["elicit-gtk"]);
    let runtime = bus.dir().join("runtime");
    std::fs::create_dir(&runtime).expect("runtime dir");
    let (path, state) = (bin.display().to_string(), bus.dir().join("gtk-state"));
    // What the program inherits from the daemon: the display, and what
    // GTK needs on a bare Xvfb (software drawing, no dconf, no
    // accessibility bus on a private session bus).
    let _daemon = Daemon::start_with_env(
        &bus,
        "",
        &[
            ("DISPLAY", Some(xvfb.display())),
            ("WAYLAND_DISPLAY", None),
            ("PATH", Some(&path)),
            ("GDK_BACKEND", Some("x11")),
            ("GSK_RENDERER", Some("cairo")),
            ("GSETTINGS_BACKEND", Some("memory")),
            ("GTK_A11Y", Some("none")),
            ("LANG", Some("C.UTF-8")),
            ("XDG_RUNTIME_DIR", runtime.to_str()),
            ("XDG_STATE_HOME", state.to_str()),
        ],
    )
    .await;
    let title = format!("{} asks, for elicit ask", asker_name());
    let started = Instant::now();
    let asked = confirm(&bus, "Deploy now?");
    eventually("the GTK window on screen", || {
        window_shown(xvfb.display(), &title)
    })
    .await;
    let took = started.elapsed();
    eprintln!("no config, elicit-gtk installed: `elicit ask` to the window mapped: {took:?}");
    assert!(took < ON_SCREEN, "the window took {took:?}");
    drop(asked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_config_and_no_gtk_a_notification_answers_the_form() {
    let bus = PrivateBus::start();
    let dunst = Dunst::start(&bus).await;
    let bin = installed(bus.dir(), &["elicit-notify"]);
    let path = bin.display().to_string();
    let _daemon = Daemon::start_with_env(
        &bus,
        "",
        &[
            ("DISPLAY", Some(dunst.display())),
            ("WAYLAND_DISPLAY", None),
            ("PATH", Some(&path)),
        ],
    )
    .await;
    let conn = bus.connect().await;
    let started = Instant::now();
    let asked = confirm(&bus, "Deploy now?");
    dunst.wait_displayed(&conn, 1).await;
    let took = started.elapsed();
    eprintln!("no config, no elicit-gtk: `elicit ask` to the notification shown: {took:?}");
    assert!(took < ON_SCREEN, "the notification took {took:?}");
    dunst.choose("accept").await;
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_started_by_d_bus_activation_shows_the_form_with_the_sessions_display() {
    // A login session's bus that starts the real daemon, with no config.
    let home = Home::new();
    let bus = home.session();
    let dunst = Dunst::start(&bus).await;
    let bin = installed(bus.dir(), &["elicit-notify"]);
    let conn = bus.connect().await;
    // What a desktop session does at login (`dbus-update-activation-
    // environment DISPLAY`): the daemon, started later, learns the display
    // from its activation environment alone.
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("dbus proxy");
    let path = bin.display().to_string();
    dbus.update_activation_environment(HashMap::from([
        ("DISPLAY", dunst.display()),
        ("PATH", path.as_str()),
    ]))
    .await
    .expect("UpdateActivationEnvironment");
    // Without --bus, as a script runs it: the call activates elicitd.
    let asked = tokio::process::Command::new(binary("elicit"))
        .args(["ask", "--message", "Deploy now?"])
        .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
        .env("XDG_STATE_HOME", home.state())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit ask starts");
    dunst.wait_displayed(&conn, 1).await;
    let _reaper = owner_pid(&bus).await.map(Reaper);
    dunst.choose("accept").await;
    let (answer, code) = printed(asked).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {}}),
        "{}",
        home.log()
    );
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_program_list_starts_nothing_even_on_a_desktop() {
    let bus = PrivateBus::start();
    let dunst = Dunst::start(&bus).await;
    let bin = installed(bus.dir(), &["elicit-notify"]);
    let path = bin.display().to_string();
    let daemon = Daemon::start_with_env(
        &bus,
        "[frontends]\nprogram = []\n",
        &[("DISPLAY", Some(dunst.display())), ("PATH", Some(&path))],
    )
    .await;
    let asked = confirm(&bus, "Deploy now?");
    eventually("the daemon to find no program", || async {
        daemon.log().contains("no front-end program applies")
    })
    .await;
    let conn = bus.connect().await;
    assert_eq!(dunst.displayed(&conn).await, 0, "nothing was started");
    drop(asked);
}

/// The proxy's log messages to the host, until one names `elicit-tui`.
async fn told_where_to_answer(host: &mut Host) -> String {
    loop {
        let message = host.recv().await;
        if message["method"] != "notifications/message" {
            continue;
        }
        let data = message["params"]["data"].as_str().unwrap_or_default().to_owned();
        if data.contains("elicit-tui") {
            assert_eq!(message["params"]["level"], "warning", "{message}");
            return data;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_display_the_host_is_told_where_to_answer() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start_with_env(&bus, "", &[("DISPLAY", None), ("WAYLAND_DISPLAY", None)]).await;
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    // The scripted server answers no initialize; the proxy reads it as
    // it passes (a host that cannot show forms itself).
    host.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "headless-host", "version": "1"}}}))
        .await;
    host.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask_and_wait", "arguments": {}}}))
        .await;
    let said = told_where_to_answer(&mut host).await;
    let list = elicit(&bus, &["list", "--json"]).await;
    let forms: Vec<Value> = serde_json::from_str(&list).expect("JSON");
    let id = forms[0]["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| forms[0]["id"].to_string());
    assert!(said.contains(&format!("elicit answer {id}")), "{said}");
    assert!(said.contains("no display"), "says why: {said}");

    let status = elicit(&bus, &["status"]).await;
    assert!(status.contains("No front-end is running"), "{status}");

    // Answered where the message says: the tool call ends.
    elicit(&bus, &["answer", &id, "--decline"]).await;
    let (result, _) = host.response(json!(7)).await;
    assert!(result.get("result").is_some(), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_display_elicit_ask_says_where_to_answer() {
    use tokio::io::AsyncBufReadExt;
    let bus = PrivateBus::start();
    let _daemon = Daemon::start_with_env(&bus, "", &[("DISPLAY", None), ("WAYLAND_DISPLAY", None)]).await;
    let mut asked = confirm(&bus, "Deploy now?");
    let stderr = asked.stderr.take().expect("stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let said = within("elicit ask to say where to answer", async {
        loop {
            let line = lines
                .next_line()
                .await
                .expect("read")
                .expect("a line before exit");
            if line.contains("elicit-tui") {
                return line;
            }
        }
    })
    .await;
    let list = elicit(&bus, &["list", "--json"]).await;
    let forms: Vec<Value> = serde_json::from_str(&list).expect("JSON");
    let id = forms[0]["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| forms[0]["id"].to_string());
    assert!(said.contains(&format!("`elicit answer {id}`")), "{said}");
    elicit(&bus, &["answer", &id, "--decline"]).await;
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "decline"}));
    assert_eq!(code, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_with_only_a_message_asks_a_confirmation() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let asked = confirm(&bus, "Deploy now?");
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Deploy now?");
    assert_eq!(
        shown.request["requestedSchema"],
        json!({"type": "object", "properties": {}})
    );
    frontend
        .answer(&shown, "accept", json!({}))
        .await
        .expect("answer");
    let (answer, code) = printed(asked).await;
    assert_eq!(answer, json!({"action": "accept", "content": {}}));
    assert_eq!(code, Some(0));
}

/// `elicit ARGS` against the bus; its standard output, after it succeeded.
async fn elicit(bus: &PrivateBus, args: &[&str]) -> String {
    let output = within(
        "elicit to finish",
        tokio::process::Command::new(binary("elicit"))
            .args(["--bus", bus.address()])
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("elicit runs");
    assert!(
        output.status.success(),
        "elicit {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
