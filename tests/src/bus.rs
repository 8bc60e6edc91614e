//! A private `dbus-daemon` for one test: never the user's bus.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

use tempfile::TempDir;

/// A bus daemon that lives as long as this value.
pub struct PrivateBus {
    child: Child,
    address: String,
    dir: TempDir,
}

impl PrivateBus {
    /// Starts a session-type bus on a socket in a fresh directory. Other
    /// users may connect (the tests check that the broker refuses them),
    /// and `extra` is spliced into the config (for activation tests).
    pub fn start_with(extra: &str) -> PrivateBus {
        PrivateBus::start_with_env(extra, &[])
    }

    /// [`PrivateBus::start_with`], with `env` added to the bus daemon's
    /// environment, which it passes on to the services it activates.
    pub fn start_with_env(extra: &str, env: &[(&str, &std::path::Path)]) -> PrivateBus {
        PrivateBus::spawn(extra, env, Stdio::inherit())
    }

    /// A session bus as `dbus-launch` starts one, without systemd: its
    /// standard error (and so that of every service it activates) is
    /// `/dev/null`. `extra` and `env` as in [`PrivateBus::start_with_env`].
    pub fn start_like_dbus_launch(extra: &str, env: &[(&str, &std::path::Path)]) -> PrivateBus {
        PrivateBus::spawn(extra, env, Stdio::null())
    }

    fn spawn(extra: &str, env: &[(&str, &std::path::Path)], stderr: Stdio) -> PrivateBus {
        let dir = tempfile::Builder::new()
            .prefix("elicit-bus")
            .tempdir()
            .expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let socket = dir.path().join("bus");
        let config = dir.path().join("bus.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  {extra}
</busconfig>
"#,
                socket.display()
            ),
        )
        .expect("write bus config");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .arg("--nofork")
            .arg("--print-address")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("dbus-daemon starts (install the dbus package)");
        let stdout = child.stdout.take().expect("stdout");
        let mut address = String::new();
        // dbus-daemon prints its address once it listens: that line is the
        // readiness signal.
        BufReader::new(stdout)
            .read_line(&mut address)
            .expect("bus address");
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).expect("chmod socket");
        PrivateBus {
            child,
            address: address.trim().to_owned(),
            dir,
        }
    }

    /// The bus daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts a plain private bus.
    pub fn start() -> PrivateBus {
        PrivateBus::start_with("")
    }

    /// The bus address.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// A scratch directory that lives as long as the bus.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// A new client connection.
    pub async fn connect(&self) -> zbus::Connection {
        elicit_client::connect(Some(&self.address))
            .await
            .expect("connect to the private bus")
    }

    /// A new connection serving `iface` at `path` from its first message.
    /// `Connection::object_server()` on a built connection starts the
    /// object server in a task of its own: a call that arrives before that
    /// task first runs (a peer answering a registration at once, on a
    /// loaded machine) is dropped unanswered. The builder waits for it.
    pub async fn serve_at(&self, path: &str, iface: impl zbus::object_server::Interface) -> zbus::Connection {
        zbus::connection::Builder::address(self.address.as_str())
            .and_then(|builder| builder.serve_at(path, iface))
            .expect("a connection to the private bus")
            .build()
            .await
            .expect("connect to the private bus, serving")
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
