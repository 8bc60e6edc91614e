//! A real notification server for the tests: dunst on a private Xvfb
//! display and the private bus, driven the way a user would through its
//! context menu (`dunstctl context`), with a scripted `dmenu` that picks
//! the action the test names.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use elicit_tests::{PrivateBus, Xvfb, eventually, within};
use zbus::zvariant::OwnedValue;

/// dunst, its display, and the files its scripted menu reads and writes.
pub struct Dunst {
    child: Child,
    xvfb: Xvfb,
    address: String,
    /// What the menu picks: the action key the test wants.
    pick: PathBuf,
    /// What dunst last offered in its menu: `#Label (summary) [id,key]`.
    menu: PathBuf,
    /// One line per notification dunst displayed: `ID URGENCY SUMMARY`,
    /// written by a dunst rule's script.
    log: PathBuf,
}

/// A notification as dunst's script saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    /// Its id.
    pub id: u32,
    /// `LOW`, `NORMAL` or `CRITICAL`.
    pub urgency: String,
    /// Its title.
    pub summary: String,
}

impl Dunst {
    /// Starts Xvfb and dunst on `bus`; returns once dunst owns
    /// `org.freedesktop.Notifications`.
    pub async fn start(bus: &PrivateBus) -> Dunst {
        let xvfb = Xvfb::start();
        let dir = bus.dir();
        let pick = dir.join("dunst-pick");
        let menu = dir.join("dunst-menu");
        let script = dir.join("dmenu.sh");
        // dunst writes one line per action to the menu's standard input
        // and invokes the line the menu prints; the menu file appears
        // whole (mv) so that the test never reads half of it.
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncat > '{menu}.tmp'\nmv '{menu}.tmp' '{menu}'\ngrep -F \",$(cat '{pick}')]\" '{menu}' | head -n 1\n",
                menu = menu.display(),
                pick = pick.display()
            ),
        )
        .expect("write the menu script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        // A rule without filters runs its script for every notification,
        // with what dunst shows in its environment.
        let log = dir.join("dunst-log");
        let logger = dir.join("dunst-log.sh");
        std::fs::write(
            &logger,
            format!(
                "#!/bin/sh\nprintf '%s %s %s\\n' \"$DUNST_ID\" \"$DUNST_URGENCY\" \"$DUNST_SUMMARY\" >> '{}'\n",
                log.display()
            ),
        )
        .expect("write the log script");
        std::fs::set_permissions(&logger, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let config = dir.join("dunstrc");
        std::fs::write(
            &config,
            format!(
                "[global]\ndmenu = {}\n[log]\nscript = {}\n",
                script.display(),
                logger.display()
            ),
        )
        .expect("write dunstrc");
        let child = Command::new("dunst")
            .arg("-config")
            .arg(&config)
            .env("DISPLAY", xvfb.display())
            .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dunst starts (install the dunst package)");
        let dunst = Dunst {
            child,
            xvfb,
            address: bus.address().to_owned(),
            pick,
            menu,
            log,
        };
        let conn = bus.connect().await;
        eventually("dunst to own org.freedesktop.Notifications", || {
            let conn = conn.clone();
            async move { owner(&conn).await.is_some() }
        })
        .await;
        dunst
    }

    /// The X display dunst draws on.
    pub fn display(&self) -> &str {
        self.xvfb.display()
    }

    /// How many notifications dunst shows now.
    pub async fn displayed(&self, conn: &zbus::Connection) -> u32 {
        let reply = conn
            .call_method(
                Some("org.freedesktop.Notifications"),
                "/org/freedesktop/Notifications",
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &("org.dunstproject.cmd0", "displayedLength"),
            )
            .await;
        let Ok(reply) = reply else { return 0 };
        reply
            .body()
            .deserialize::<OwnedValue>()
            .ok()
            .and_then(|value| u32::try_from(value).ok())
            .unwrap_or(0)
    }

    /// Waits until dunst shows `count` notifications.
    pub async fn wait_displayed(&self, conn: &zbus::Connection, count: u32) {
        eventually(&format!("dunst to show {count} notification(s)"), || async {
            self.displayed(conn).await == count
        })
        .await;
    }

    /// Opens dunst's context menu and picks action `key` of the shown
    /// notification (nothing, for a key it does not offer); returns the
    /// menu dunst offered.
    pub async fn choose(&self, key: &str) -> String {
        std::fs::write(&self.pick, key).expect("write the pick");
        within("dunst's menu", async {
            loop {
                let _ = std::fs::remove_file(&self.menu);
                self.dunstctl(&["context"]);
                // dunst refuses a menu while its last one is still
                // winding down, and says so only in its log: ask again
                // until a menu opens.
                let opened = tokio::time::timeout(Duration::from_secs(1), async {
                    while !self.menu.exists() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                })
                .await;
                if opened.is_ok() {
                    return std::fs::read_to_string(&self.menu).expect("read the menu");
                }
            }
        })
        .await
    }

    /// Every notification dunst has displayed so far, oldest first.
    pub fn logged(&self) -> Vec<Logged> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ' ');
                Some(Logged {
                    id: parts.next()?.parse().ok()?,
                    urgency: parts.next()?.to_owned(),
                    summary: parts.next()?.to_owned(),
                })
            })
            .collect()
    }

    /// Closes the newest notification as a user dismissing it does.
    pub fn dismiss(&self) {
        self.dunstctl(&["close"]);
    }

    fn dunstctl(&self, args: &[&str]) {
        let status = Command::new("dunstctl")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stdout(Stdio::null())
            .status()
            .expect("dunstctl runs");
        assert!(status.success(), "dunstctl {args:?} failed");
    }
}

/// The unique name that owns `org.freedesktop.Notifications`, if any.
pub async fn owner(conn: &zbus::Connection) -> Option<String> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
    let name = zbus::names::BusName::try_from("org.freedesktop.Notifications").ok()?;
    dbus.get_name_owner(name).await.ok().map(|o| o.to_string())
}

/// The notification id in a menu line for action `key`: `[id,key]`.
pub fn id_in_menu(menu: &str, key: &str) -> Option<u32> {
    let end = format!(",{key}]");
    let line = menu.lines().find(|line| line.ends_with(&end))?;
    let start = line.rfind('[')? + 1;
    line[start..line.len() - end.len()].parse().ok()
}

impl Drop for Dunst {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
