//! A real KDE Plasma 5.27 session on a private Xvfb and a private bus, as
//! `startplasma-x11` would start its parts (Debian 12's plasma-workspace
//! and plasma-desktop):
//!
//! * `kded5` with its `statusnotifierwatcher` module, KDE's
//!   `org.kde.StatusNotifierWatcher` (the session loads it in kded's
//!   second phase; here it is asked for by name, as `loadModule` does);
//! * `kactivitymanagerd`, without which plasmashell refuses to load its
//!   shell ("The activity manager daemon (kactivitymanagerd) is not
//!   running");
//! * `plasmashell` with the default desktop layout: a panel whose system
//!   tray is a status-notifier host and whose notifications applet is
//!   KDE's `org.freedesktop.Notifications` server.
//!
//! Every process gets a fresh home, so that nothing of the user's Plasma
//! is read or written, and its own process group, so that what it starts
//! (KIO workers) ends with it.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use elicit_tests::{PrivateBus, Xvfb};

/// How long the session may take to come up: plasmashell loads its whole
/// QML desktop, which on a loaded 2-core machine takes tens of seconds.
const STARTUP: Duration = Duration::from_secs(120);

/// The session, running while this value lives.
pub struct Plasma {
    /// Each part with the name of its program (and of its log).
    children: Vec<(String, Child)>,
    xvfb: Xvfb,
    home: tempfile::TempDir,
    conn: zbus::Connection,
}

impl Plasma {
    /// Starts the session on `bus`; returns once plasmashell serves
    /// notifications and its tray hosts status-notifier items.
    pub async fn start(bus: &PrivateBus) -> Plasma {
        let xvfb = Xvfb::start();
        let home = tempfile::Builder::new()
            .prefix("elicit-plasma")
            .tempdir()
            .expect("temp dir");
        let conn = bus.connect().await;
        let mut plasma = Plasma {
            children: Vec::new(),
            xvfb,
            home,
            conn,
        };
        plasma.spawn(bus, "kded5 (install kded5)", PathBuf::from("kded5"));
        plasma.wait_for_name("org.kde.kded5").await;
        let loaded = plasma
            .conn
            .call_method(
                Some("org.kde.kded5"),
                "/kded",
                Some("org.kde.kded5"),
                "loadModule",
                &("statusnotifierwatcher",),
            )
            .await
            .expect("kded5 loadModule");
        let loaded: bool = loaded.body().deserialize().expect("a boolean");
        assert!(
            loaded,
            "kded5 did not load statusnotifierwatcher (install plasma-workspace)"
        );
        plasma.wait_for_name("org.kde.StatusNotifierWatcher").await;
        plasma.spawn(
            bus,
            "kactivitymanagerd (install kactivitymanagerd)",
            activity_manager(),
        );
        plasma.wait_for_name("org.kde.ActivityManager").await;
        plasma.spawn(
            bus,
            "plasmashell (install plasma-workspace and plasma-desktop)",
            PathBuf::from("plasmashell"),
        );
        plasma.wait_for_name("org.freedesktop.Notifications").await;
        plasma.wait_for_host().await;
        plasma
    }

    /// Starts `program` in the session's environment.
    fn spawn(&mut self, bus: &PrivateBus, what: &str, program: PathBuf) {
        let home = self.home.path();
        let runtime = home.join("runtime");
        if !runtime.exists() {
            std::fs::create_dir(&runtime).expect("runtime dir");
            std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .expect("chmod");
        }
        let log = std::fs::File::create(home.join(format!(
            "{}.log",
            program.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        )))
        .expect("log file");
        let child = Command::new(&program)
            .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
            .env("DISPLAY", self.xvfb.display())
            .env("QT_QPA_PLATFORM", "xcb")
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_CURRENT_DESKTOP", "KDE")
            .env("KDE_FULL_SESSION", "true")
            .env("KDE_SESSION_VERSION", "5")
            // No crash dialog (drkonqi) if a part falls over: the test
            // fails on what it waits for instead.
            .env("KDE_DEBUG", "1")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
        let name = program.file_name().map(|n| n.to_string_lossy().into_owned());
        self.children.push((name.unwrap_or_default(), child));
    }

    /// The session's log of `program` (what it wrote to standard error).
    pub fn log(&self, program: &str) -> String {
        std::fs::read_to_string(self.home.path().join(format!("{program}.log"))).unwrap_or_default()
    }

    async fn owner(&self, name: &str) -> Option<String> {
        let dbus = zbus::fdo::DBusProxy::new(&self.conn).await.ok()?;
        let name = zbus::names::BusName::try_from(name).ok()?;
        dbus.get_name_owner(name).await.ok().map(|o| o.to_string())
    }

    /// Fails at once, with its log, when a part of the session has
    /// ended or plasmashell gave up on its desktop (it stays running
    /// without one, e.g. "Aborting shell load" without kactivitymanagerd,
    /// "starting invalid corona" without plasma-desktop's shell package):
    /// waiting on would only time out.
    fn assert_running(&self) {
        let shell = self.log("plasmashell");
        assert!(
            !shell.contains("Aborting shell load") && !shell.contains("invalid corona"),
            "plasmashell did not load its desktop (install plasma-desktop and kactivitymanagerd); it said:\n{shell}"
        );
        for (name, child) in &self.children {
            assert!(
                !elicit_tests::procs::exited(child.id()),
                "{name} ended while the KDE session started; it said:\n{}",
                self.log(name)
            );
        }
    }

    async fn wait_for_name(&self, name: &str) {
        let owned = tokio::time::timeout(STARTUP, async {
            while self.owner(name).await.is_none() {
                self.assert_running();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert!(
            owned.is_ok(),
            "the KDE session did not provide {name} within {STARTUP:?}; plasmashell said:\n{}",
            self.log("plasmashell")
        );
    }

    /// Waits for plasmashell's system tray to register as a host.
    async fn wait_for_host(&self) {
        let registered = tokio::time::timeout(STARTUP, async {
            loop {
                let reply = self
                    .conn
                    .call_method(
                        Some("org.kde.StatusNotifierWatcher"),
                        "/StatusNotifierWatcher",
                        Some("org.freedesktop.DBus.Properties"),
                        "Get",
                        &("org.kde.StatusNotifierWatcher", "IsStatusNotifierHostRegistered"),
                    )
                    .await;
                let yes = reply
                    .ok()
                    .and_then(|r| r.body().deserialize::<zbus::zvariant::OwnedValue>().ok())
                    .and_then(|v| bool::try_from(v).ok())
                    .unwrap_or(false);
                if yes {
                    return;
                }
                self.assert_running();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert!(
            registered.is_ok(),
            "plasmashell's system tray did not register with KDE's watcher within {STARTUP:?}:\n{}",
            self.log("plasmashell")
        );
    }

    /// The unique bus name of plasmashell's notification server.
    pub async fn notification_server(&self) -> String {
        self.owner("org.freedesktop.Notifications")
            .await
            .expect("plasmashell owns org.freedesktop.Notifications")
    }

    /// The unique bus name of plasmashell (its tray is a host there).
    pub async fn shell(&self) -> String {
        self.owner("org.kde.plasmashell")
            .await
            .expect("plasmashell owns org.kde.plasmashell")
    }

    /// The unique bus name of kded5, which serves the watcher.
    pub async fn watcher(&self) -> String {
        self.owner("org.kde.StatusNotifierWatcher")
            .await
            .expect("kded5 owns org.kde.StatusNotifierWatcher")
    }

    /// Captures Plasma's notification popup (at the bottom right, above
    /// the panel) to `target`, once it is drawn: the popup maps first and
    /// paints its content a moment later, light over the dark wallpaper.
    pub async fn screenshot_popup(&self, target: &str) {
        let capture = || async {
            let status = tokio::process::Command::new("import")
                .args(["-display", self.display(), "-window", "root"])
                .args(["-crop", "345x160+903+563", "+repage"])
                .arg(target)
                .status()
                .await
                .expect("import (imagemagick) runs");
            assert!(status.success(), "import failed");
            let mean = tokio::process::Command::new("convert")
                .arg(target)
                .args(["-format", "%[fx:mean]", "info:"])
                .output()
                .await
                .expect("convert (imagemagick) runs");
            String::from_utf8_lossy(&mean.stdout)
                .trim()
                .parse::<f64>()
                .unwrap_or(0.0)
                > 0.75
        };
        elicit_tests::eventually("Plasma to draw its popup", capture).await;
    }

    /// The X display the session draws on.
    pub fn display(&self) -> &str {
        self.xvfb.display()
    }
}

/// Where Debian keeps `kactivitymanagerd` (a multiarch libexec folder,
/// not on `PATH`).
fn activity_manager() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("libexec/kactivitymanagerd"))
        .chain([PathBuf::from("/usr/libexec/kactivitymanagerd")])
        .find(|path| path.is_file());
    found.unwrap_or_else(|| PathBuf::from("kactivitymanagerd"))
}

impl Drop for Plasma {
    fn drop(&mut self) {
        // Last started, first ended: plasmashell before the services it
        // uses, each with what it started.
        for (_, child) in self.children.iter_mut().rev() {
            let _ = rustix::process::kill_process_group(
                rustix::process::Pid::from_child(child),
                rustix::process::Signal::KILL,
            );
            let _ = child.wait();
        }
    }
}
