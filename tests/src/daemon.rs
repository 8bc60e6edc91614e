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
    /// Environment changes for the process: `None` removes a variable.
    env: Vec<(String, Option<String>)>,
    /// Extra command-line arguments.
    args: Vec<String>,
}

impl Daemon {
    /// Starts `elicitd` on `bus` with `config_toml` and waits until it owns
    /// its name; it does not exit when idle (see
    /// [`Daemon::start_with_env`]).
    pub async fn start(bus: &PrivateBus, config_toml: &str) -> Daemon {
        Daemon::start_with_env(bus, config_toml, &[]).await
    }

    /// [`Daemon::start`] with the daemon's environment changed: each
    /// variable set to `Some` value or removed for `None` (the front-end
    /// launcher reads `DISPLAY` and `WAYLAND_DISPLAY`).
    ///
    /// It runs with `--no-exit-on-idle`: a private bus has no service file
    /// to start it again, and a test (or a bench section) that leaves it
    /// idle for a minute must still find it. [`Daemon::start_with`] without
    /// that flag is for tests of idle exits.
    pub async fn start_with_env(bus: &PrivateBus, config_toml: &str, env: &[(&str, Option<&str>)]) -> Daemon {
        Daemon::start_with(bus, config_toml, env, &["--no-exit-on-idle"]).await
    }

    /// Starts `elicitd` with `config_toml`, its environment changed as in
    /// [`Daemon::start_with_env`], and exactly the extra command-line
    /// arguments `args`: without `--no-exit-on-idle` it exits when idle.
    pub async fn start_with(
        bus: &PrivateBus,
        config_toml: &str,
        env: &[(&str, Option<&str>)],
        args: &[&str],
    ) -> Daemon {
        let state_dir = bus.dir().join("state");
        let config = bus.dir().join("config.toml");
        std::fs::write(&config, config_toml).expect("write config");
        let mut daemon = Daemon {
            child: None,
            address: bus.address().to_owned(),
            state_dir,
            config,
            log: bus.dir().join("elicitd.log"),
            env: env
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.map(str::to_owned)))
                .collect(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        };
        daemon.spawn(None).await;
        daemon
    }

    async fn owner(&self) -> Option<String> {
        let conn = elicit_client::connect(Some(&self.address)).await.ok()?;
        let dbus = zbus::fdo::DBusProxy::new(&conn).await.ok()?;
        let name = zbus::names::BusName::try_from(BUS_NAME).ok()?;
        dbus.get_name_owner(name).await.ok().map(|n| n.to_string())
    }

    /// Starts the process and waits until it owns the name; `previous` is
    /// the owner before a restart, which the bus may still list for a
    /// moment after the kill.
    async fn spawn(&mut self, previous: Option<String>) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let mut command = Command::new(binary("elicitd"));
        // Debug logs help a failing test; a caller's own ELICITD_LOG (the
        // benchmark's "info") overrides it below.
        command.env("ELICITD_LOG", "debug");
        // The daemon records its bus under $HOME for discovery: a test's
        // daemon records it in the test's own folder, never the user's.
        if let Some(home) = self.state_dir.parent() {
            command.env("HOME", home);
        }
        for (name, value) in &self.env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        let child = command
            .arg("--bus")
            .arg(&self.address)
            .arg("--state-dir")
            .arg(&self.state_dir)
            .arg("--config")
            .arg(&self.config)
            .args(&self.args)
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("elicitd starts");
        self.child = Some(child);
        eventually("elicitd to own its name", || async {
            let owner = self.owner().await;
            owner.is_some() && owner != previous
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

    /// Sends SIGTERM and waits (up to 10 s) for the daemon to exit;
    /// returns how long it took, or `None` if it had not exited by then.
    pub fn terminate(&mut self) -> Option<std::time::Duration> {
        let child = self.child.as_mut()?;
        let started = std::time::Instant::now();
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "kill -TERM failed");
        while started.elapsed() < std::time::Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                self.child = None;
                return Some(started.elapsed());
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        None
    }

    /// Starts the daemon again on the same state directory.
    pub async fn restart(&mut self) {
        let previous = self.owner().await;
        self.kill9();
        self.spawn(previous).await;
    }

    /// Everything the daemon logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The daemon's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The daemon's state directory.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }
}

/// The discovery records that daemons with `home` as `$HOME` keep, one per
/// bus (`.local/state/elicitd/bus.UID.BUS_ID`), each with the address in it.
pub fn bus_records(home: &std::path::Path) -> Vec<(PathBuf, String)> {
    let uid = rustix::process::getuid().as_raw();
    let prefix = format!("bus.{uid}.");
    let Ok(entries) = std::fs::read_dir(home.join(".local/state/elicitd")) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String)> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix) && !n.ends_with(".partial"))
        })
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.path(), text.trim().to_owned())
        })
        .collect();
    out.sort();
    out
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill9();
        // A failing test shows what the daemon saw.
        if std::thread::panicking() {
            eprintln!(
                "---- elicitd log ----\n{}---- end of elicitd log ----",
                self.log()
            );
        }
    }
}
