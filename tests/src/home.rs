//! A user's folders and the login session's bus that starts the real
//! `elicitd` by D-Bus activation, as installed: the service file names the
//! binary under test, and the daemon finds its config and state through
//! the XDG variables the bus passes on.

use std::path::PathBuf;
use std::process::Command;

use elicit_proto::dbus::BUS_NAME;

use crate::procs::exited;
use crate::{PrivateBus, binary};

/// A home with a services folder for activation, an XDG config and state.
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    /// A home with no config: the daemon's defaults.
    pub fn new() -> Home {
        let dir = tempfile::tempdir().expect("temp dir");
        let services = dir.path().join("services");
        std::fs::create_dir(&services).expect("services dir");
        std::fs::write(
            services.join(format!("{BUS_NAME}.service")),
            format!(
                "[D-BUS Service]\nName={BUS_NAME}\nExec={}\n",
                binary("elicitd").display()
            ),
        )
        .expect("service file");
        Home { dir }
    }

    /// A home whose `config.toml` is `config_toml`.
    pub fn with_config(config_toml: &str) -> Home {
        let home = Home::new();
        let config = home.dir.path().join("config/elicitd");
        std::fs::create_dir_all(&config).expect("config dir");
        std::fs::write(config.join("config.toml"), config_toml).expect("write config");
        home
    }

    /// The home folder itself.
    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// `XDG_STATE_HOME`.
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The daemon's state directory under `XDG_STATE_HOME`.
    pub fn state_dir(&self) -> PathBuf {
        self.state().join("elicitd")
    }

    /// What the activated daemons logged (their standard error is
    /// `/dev/null`, as under `dbus-launch`, so they log to a file).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.state_dir().join("elicitd.log")).unwrap_or_default()
    }

    /// A login session's bus, as `dbus-launch` starts one: the service
    /// folder in its config; the XDG folders, `HOME` and an asker socket
    /// of the test's own in the environment it gives what it activates.
    pub fn session(&self) -> PrivateBus {
        let services = self.dir.path().join("services");
        PrivateBus::start_like_dbus_launch(
            &format!("<servicedir>{}</servicedir>", services.display()),
            &[
                ("XDG_STATE_HOME", &self.state()),
                ("XDG_CONFIG_HOME", &self.dir.path().join("config")),
                ("HOME", self.dir.path()),
                ("ELICITD_ASKER_SOCKET", &self.dir.path().join("agents.sock")),
            ],
        )
    }

    /// `elicit status` as this user on `bus`: it activates the daemon.
    pub fn status(&self, bus: &PrivateBus) -> (bool, String) {
        let output = Command::new(binary("elicit"))
            .args(["--bus", bus.address(), "status"])
            .env("XDG_STATE_HOME", self.state())
            .output()
            .expect("elicit status runs");
        (
            output.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        )
    }
}

impl Default for Home {
    fn default() -> Self {
        Home::new()
    }
}

/// The PID of the broker name's owner on `bus`, if it has one.
pub async fn owner_pid(bus: &PrivateBus) -> Option<u32> {
    let conn = bus.connect().await;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.ok()?;
    let name = zbus::names::BusName::try_from(BUS_NAME).ok()?;
    dbus.get_connection_unix_process_id(name).await.ok()
}

/// Stops an activated daemon that a failing test leaves behind.
pub struct Reaper(pub u32);

impl Drop for Reaper {
    fn drop(&mut self) {
        if !exited(self.0) {
            let _ = Command::new("kill").arg(self.0.to_string()).status();
        }
    }
}
