//! The real `elicitd` binary on a private bus.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use elicit_proto::dbus::BUS_NAME;

use crate::{PrivateBus, binary, eventually};

/// A running `elicitd` with its own state directory and config.
pub struct Daemon {
    child: Option<Child>,
    address: String,
    state_dir: PathBuf,
    config: PathBuf,
    log: PathBuf,
}

impl Daemon {
    /// Starts `elicitd` on `bus` with `config_toml` and waits until it owns
    /// its name.
    pub async fn start(bus: &PrivateBus, config_toml: &str) -> Daemon {
        let state_dir = bus.dir().join("state");
        let config = bus.dir().join("config.toml");
        std::fs::write(&config, config_toml).expect("write config");
        let mut daemon = Daemon {
            child: None,
            address: bus.address().to_owned(),
            state_dir,
            config,
            log: bus.dir().join("elicitd.log"),
        };
        daemon.spawn().await;
        daemon
    }

    async fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let child = Command::new(binary("elicitd"))
            .arg("--bus")
            .arg(&self.address)
            .arg("--state-dir")
            .arg(&self.state_dir)
            .arg("--config")
            .arg(&self.config)
            .env("ELICITD_LOG", "debug")
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("elicitd starts");
        self.child = Some(child);
        let conn = elicitd::client::connect(Some(&self.address))
            .await
            .expect("connect");
        let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("bus proxy");
        eventually("elicitd to own its name", || {
            let dbus = dbus.clone();
            async move {
                let name = zbus::names::BusName::try_from(BUS_NAME).expect("valid name");
                dbus.name_has_owner(name).await.unwrap_or(false)
            }
        })
        .await;
    }

    /// `kill -9`, then wait until the process is gone.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the daemon again on the same state directory.
    pub async fn restart(&mut self) {
        self.kill9();
        self.spawn().await;
    }

    /// Everything the daemon logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The daemon's state directory.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill9();
    }
}
