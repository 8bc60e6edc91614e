//! The desktop's figures, each beside its floor from the same run:
//! * a form to the notification server's `Notify` call, through
//!   elicit-notify; floor: a bare `Notify` round trip;
//! * a form to its window mapped (X11 `MapNotify` on the root window of a
//!   private Xvfb, read from `xev`), with the companion (a resident
//!   elicit-gtk) running; floor: an empty GTK window mapped by a running
//!   process (`gtk-floor`);
//! * the same from nothing: the daemon idle-exited and no front-end
//!   running, so the client's first call starts elicitd by D-Bus
//!   activation and elicitd starts elicit-gtk as its front-end program;
//!   same floor.
//!
//! Needs Xvfb, xev and xdotool (tests/setup installs them).

use std::process::Stdio;
use std::time::Instant;

use elicit_proto::dbus::Broker1Proxy;
use elicit_tests::home::{Home, owner_pid};
use elicit_tests::{Daemon, PrivateBus, Xvfb, binary, eventually, within};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::broker::{CONFIRM, session};
use crate::figure::{Compare, Figure, Row, time};

/// What the fake notification server saw, and when.
#[derive(Debug)]
enum Seen {
    Notify(Instant),
    Close,
}

/// A notification server that notes when each call came: the bench must
/// see the instant `Notify` arrives, which no real server reports.
struct Server(UnboundedSender<Seen>);

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        _app_name: &str,
        _replaces_id: u32,
        _app_icon: &str,
        _summary: &str,
        _body: &str,
        _actions: Vec<String>,
        _hints: std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let _ = self.0.send(Seen::Notify(Instant::now()));
        1
    }

    fn close_notification(&self, _id: u32) {
        let _ = self.0.send(Seen::Close);
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("bench".into(), "elicitd".into(), "1".into(), "1.2".into())
    }
}

/// Both figures and their floors.
pub async fn rows(iterations: usize) -> Vec<Row> {
    let mut rows = notify_rows(iterations).await;
    rows.extend(window_rows(iterations).await);
    rows
}

/// Waits until `count` front-ends are registered.
async fn registered(conn: &zbus::Connection, count: u32) {
    let broker = Broker1Proxy::builder(conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy");
    eventually("the front-end to register", || async {
        broker.frontends().await.unwrap_or(0) >= count
    })
    .await;
}

async fn notify_rows(iterations: usize) -> Vec<Row> {
    let bus = PrivateBus::start();
    let (seen_tx, mut seen) = unbounded_channel();
    let server_conn = bus
        .serve_at("/org/freedesktop/Notifications", Server(seen_tx))
        .await;
    server_conn
        .request_name("org.freedesktop.Notifications")
        .await
        .expect("own the notification name");
    let _daemon = Daemon::start(&bus, "").await;
    let _notify = tokio::process::Command::new(binary("elicit-notify"))
        .args(["--bus", bus.address(), "--renotify-after", "0"])
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit-notify starts");
    let conn = bus.connect().await;
    registered(&conn, 1).await;

    // The floor: `Notify` called straight, as elicit-notify calls it.
    let proxy = zbus::Proxy::new(
        &conn,
        "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
    )
    .await
    .expect("proxy");
    let hints: std::collections::HashMap<&str, zbus::zvariant::Value<'_>> = Default::default();
    let floor = time("floor: Notify round trip", iterations, async || {
        let _: u32 = proxy
            .call(
                "Notify",
                &(
                    "elicitd",
                    0u32,
                    "",
                    "Go?",
                    "Go?",
                    vec!["accept", "Accept"],
                    &hints,
                    -1i32,
                ),
            )
            .await
            .expect("Notify");
    })
    .await;
    while seen.try_recv().is_ok() {}

    // A form from submission to the server's `Notify`; its withdrawal
    // (the client closes it) closes the notification before the next.
    let client = session(&conn, "bench").await;
    let mut samples = Vec::with_capacity(iterations);
    for round in 0..iterations + (iterations / 10).max(3) {
        let started = Instant::now();
        let form = client.submit(CONFIRM, None, None).await.expect("submit");
        let notified = next_notify(&mut seen).await;
        if round >= (iterations / 10).max(3) {
            samples.push(notified.saturating_duration_since(started));
        }
        client.close_form(&form).await.expect("close the form");
        within("the notification to close", async {
            while !matches!(seen.recv().await, Some(Seen::Close) | None) {}
        })
        .await;
    }
    let figure = Figure::new("form to Notify (elicit-notify)", samples);
    let floor_p50 = floor.p50();
    vec![
        Row::latency(figure, "Notify round trip", floor_p50, None),
        Row::Timed(floor, Compare::Floor),
    ]
}

async fn next_notify(seen: &mut UnboundedReceiver<Seen>) -> Instant {
    within("the Notify call", async {
        loop {
            match seen.recv().await {
                Some(Seen::Notify(at)) => return at,
                Some(Seen::Close) => continue,
                None => panic!("the notification server is gone"),
            }
        }
    })
    .await
}

/// A top-level window mapped or unmapped, as xev saw it.
#[derive(Debug)]
enum Mapped {
    /// Mapped: its X id, and when the line came.
    Map(String, Instant),
    Unmap,
}

/// Follows the root window's children on `display` with xev.
fn watch_maps(display: &str) -> (tokio::process::Child, UnboundedReceiver<Mapped>) {
    // xev writes through stdio: line-buffered, or the events would wait in
    // its buffer.
    let mut xev = tokio::process::Command::new("stdbuf")
        .args([
            "-oL",
            "xev",
            "-display",
            display,
            "-root",
            "-event",
            "substructure",
        ])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("xev runs (install x11-utils)");
    let stdout = xev.stdout.take().expect("xev's output");
    let (tx, rx) = unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        // "MapNotify event, serial 18, synthetic NO, window 0x1e0,
        //     event 0x1e0, window 0x400003, override NO"
        let mut pending: Option<(bool, Instant)> = None;
        while let Ok(Some(line)) = lines.next_line().await {
            let at = Instant::now();
            if line.starts_with("MapNotify") {
                pending = Some((true, at));
            } else if line.starts_with("UnmapNotify") {
                pending = Some((false, at));
            } else if let Some((map, at)) = pending.take() {
                let window = line
                    .split("window ")
                    .nth(1)
                    .and_then(|rest| rest.split(',').next())
                    .unwrap_or_default()
                    .to_owned();
                let event = if map {
                    Mapped::Map(window, at)
                } else {
                    Mapped::Unmap
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
        }
    });
    (xev, rx)
}

async fn next_map(maps: &mut UnboundedReceiver<Mapped>) -> (String, Instant) {
    within("a window to map", async {
        loop {
            match maps.recv().await {
                Some(Mapped::Map(window, at)) => return (window, at),
                Some(Mapped::Unmap) => continue,
                None => panic!("xev ended"),
            }
        }
    })
    .await
}

async fn next_unmap(maps: &mut UnboundedReceiver<Mapped>) {
    within("the window to unmap", async {
        loop {
            match maps.recv().await {
                Some(Mapped::Unmap) => return,
                Some(Mapped::Map(..)) => continue,
                None => panic!("xev ended"),
            }
        }
    })
    .await
}

/// The environment of a GTK program on `xvfb` and `bus`.
fn gtk_env(command: &mut tokio::process::Command, xvfb: &Xvfb, bus: &PrivateBus) {
    command
        .env("DISPLAY", xvfb.display())
        .env("GDK_BACKEND", "x11")
        .env("GSK_RENDERER", "cairo")
        .env("GSETTINGS_BACKEND", "memory")
        .env("GTK_A11Y", "none")
        .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
        .env("XDG_STATE_HOME", bus.dir().join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .kill_on_drop(true);
}

async fn window_rows(iterations: usize) -> Vec<Row> {
    let bus = PrivateBus::start();
    let xvfb = Xvfb::start();
    let (_xev, mut maps) = watch_maps(xvfb.display());
    // The floor first, alone on the display.
    let mut floor_command = tokio::process::Command::new(binary("gtk-floor"));
    gtk_env(&mut floor_command, &xvfb, &bus);
    let mut floor_program = floor_command.spawn().expect("gtk-floor starts");
    let mut input = floor_program.stdin.take().expect("gtk-floor's input");
    let warm = (iterations / 10).max(3);
    let mut floor_samples = Vec::with_capacity(iterations);
    for round in 0..iterations + warm {
        let started = Instant::now();
        input.write_all(b"show\n").await.expect("show");
        let (_, mapped) = next_map(&mut maps).await;
        if round >= warm {
            floor_samples.push(mapped.saturating_duration_since(started));
        }
        input.write_all(b"hide\n").await.expect("hide");
        next_unmap(&mut maps).await;
    }
    drop(input);
    let _ = within("gtk-floor to end", floor_program.wait()).await;
    let floor = Figure::new("floor: empty GTK window mapped", floor_samples);

    // The companion: elicit-gtk, running and registered, window hidden.
    let _daemon = Daemon::start(&bus, "").await;
    let mut gtk_command = tokio::process::Command::new(binary("elicit-gtk"));
    gtk_command.args(["--bus", bus.address()]);
    gtk_env(&mut gtk_command, &xvfb, &bus);
    let _gtk = gtk_command.spawn().expect("elicit-gtk starts");
    let conn = bus.connect().await;
    registered(&conn, 1).await;
    let mut client = session(&conn, "bench").await;
    let mut samples = Vec::with_capacity(iterations);
    for round in 0..iterations + warm {
        let started = Instant::now();
        let form = client.submit(CONFIRM, None, None).await.expect("submit");
        let (window, mapped) = next_map(&mut maps).await;
        if round >= warm {
            samples.push(mapped.saturating_duration_since(started));
        }
        // Escape in the window cancels the form, and the window hides at
        // once (a withdrawal would leave a notice up for seconds).
        xdotool(xvfb.display(), &["windowfocus", "--sync", &window]).await;
        xdotool(xvfb.display(), &["key", "--clearmodifiers", "Escape"]).await;
        client.wait(&form).await.expect("the outcome");
        next_unmap(&mut maps).await;
    }
    let figure = Figure::new("form to window mapped (elicit-gtk running)", samples);
    let floor_p50 = floor.p50();
    let cold = from_nothing(&xvfb, &mut maps, iterations).await;
    vec![
        Row::latency(figure, "empty GTK window mapped", floor_p50, None),
        Row::latency(cold, "empty GTK window mapped", floor_p50, None),
        Row::Timed(floor, Compare::Floor),
    ]
}

/// A form from nothing to its window mapped: no daemon (it exited idle),
/// no front-end; timed from the client's first call, which activates
/// elicitd, to the window of the elicit-gtk that elicitd starts. Each
/// round then ends elicit-gtk and waits for the daemon's idle exit.
async fn from_nothing(xvfb: &Xvfb, maps: &mut UnboundedReceiver<Mapped>, iterations: usize) -> Figure {
    let home = Home::with_config("");
    let bus = home.session();
    // The program's environment is the activated daemon's, which has no
    // display: `env` gives it one.
    let command: Vec<String> = [
        "env",
        &format!("DISPLAY={}", xvfb.display()),
        "GDK_BACKEND=x11",
        "GSK_RENDERER=cairo",
        "GSETTINGS_BACKEND=memory",
        "GTK_A11Y=none",
        &format!("DBUS_SESSION_BUS_ADDRESS={}", bus.address()),
        &binary("elicit-gtk").display().to_string(),
        "--bus",
        bus.address(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    std::fs::write(
        home.path().join("config/elicitd/config.toml"),
        format!(
            "[broker]\nexit-on-idle-secs = 1\n[[frontends.program]]\nname = \"gtk\"\ncommand = {command:?}\n"
        ),
    )
    .expect("write the config");
    // Fewer rounds: each waits a second for the idle exit.
    let rounds = (iterations / 10).clamp(5, 30);
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..rounds + 1 {
        let started = Instant::now();
        let conn = bus.connect().await;
        let client = session(&conn, "bench").await;
        let form = client.submit(CONFIRM, None, None).await.expect("submit");
        let (window, mapped) = next_map(maps).await;
        // The first round also fills the page cache: not counted.
        if round > 0 {
            samples.push(mapped.saturating_duration_since(started));
        }
        xdotool(xvfb.display(), &["windowfocus", "--sync", &window]).await;
        xdotool(xvfb.display(), &["key", "--clearmodifiers", "Escape"]).await;
        let mut client = client;
        client.wait(&form).await.expect("the outcome");
        next_unmap(maps).await;
        let _ = client.close().await;
        // elicit-gtk stays running (it is resident): end it, then let the
        // daemon exit idle.
        if let Some(pid) = name_owner_pid(&conn, INSTANCE_NAME).await {
            let _ = std::process::Command::new("kill").arg(pid.to_string()).status();
        }
        eventually("elicit-gtk to end", || async {
            name_owner_pid(&conn, INSTANCE_NAME).await.is_none()
        })
        .await;
        eventually("elicitd to exit idle", || async {
            owner_pid(&bus).await.is_none()
        })
        .await;
    }
    Figure::new("form to window mapped, from nothing", samples)
}

/// The elicit-gtk instance's name on the broker's bus.
const INSTANCE_NAME: &str = "dev.elicitd.Gtk";

/// The PID of `name`'s owner, if it has one.
async fn name_owner_pid(conn: &zbus::Connection, name: &str) -> Option<u32> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
    let name = zbus::names::BusName::try_from(name).ok()?;
    dbus.get_connection_unix_process_id(name).await.ok()
}

async fn xdotool(display: &str, args: &[&str]) {
    let status = within(
        "xdotool",
        tokio::process::Command::new("xdotool")
            .args(args)
            .env("DISPLAY", display)
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .status(),
    )
    .await
    .expect("xdotool runs");
    assert!(status.success(), "xdotool {args:?} failed");
}
