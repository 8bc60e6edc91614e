//! The asker-only socket: what a remote agent may reach, and nothing else.
//!
//! Forwarding the whole session bus to a build server (`ssh -R` to the bus
//! socket) grants every process there every service of the desktop session.
//! This socket grants asking: a peer-to-peer D-Bus connection (no bus behind
//! it, so no other service can be named) that serves `OpenSession` and
//! `ResumeSession`, the `Session1` and `Request1` objects of the sessions it
//! opened, and their `Response` signals. Each call is re-issued to the
//! broker over a bus connection of the peer's own, so the broker applies
//! the same checks, limits and rules as to any client, and a peer that goes
//! away leaves the bus like any client: its forms are withdrawn after the
//! usual grace period. Every session opened here is marked `remote` in its
//! origin, so that rules and front-ends can tell.
//!
//! The socket is `0600` in a `0700` directory, and a connecting process must
//! run as the daemon's uid (`SO_PEERCRED`): locally that is the user's `ssh`,
//! which forwards the remote end. The D-Bus handshake is `ANONYMOUS`, since
//! the uid the remote side would claim in `EXTERNAL` is the remote account's,
//! which need not match.
//!
//! Under systemd the socket may belong to `elicitd.socket` instead (socket
//! activation): systemd holds it while no daemon runs, a connection starts
//! `elicitd.service`, and the daemon serves the socket it is handed and
//! leaves it in place when it exits idle. Without that, the socket lives
//! and dies with the daemon.

mod objects;
mod relay;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;
use tokio::task::JoinSet;

/// Where the socket is by default: `$XDG_RUNTIME_DIR/elicitd/agents.sock`.
pub fn default_path() -> Option<PathBuf> {
    Some(
        directories::BaseDirs::new()?
            .runtime_dir()?
            .join("elicitd")
            .join("agents.sock"),
    )
}

/// A failure to set up the socket.
#[derive(Debug, thiserror::Error)]
#[error("cannot serve the asker socket {path}: {source}")]
pub struct ListenError {
    /// The socket path.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The socket being served: bound here and removed again when dropped,
/// or handed over by systemd and left to it.
#[derive(Debug)]
pub struct AskerSocket {
    path: PathBuf,
    listener: UnixListener,
    /// Bound by this daemon, so its file goes with it.
    bound_here: bool,
}

impl AskerSocket {
    /// Binds `path` (its folder made `0700`, the socket `0600`), replacing
    /// a stale socket that nothing listens on; a live one means another
    /// daemon serves it, which is an error.
    pub fn bind(path: &Path) -> Result<AskerSocket, ListenError> {
        let fail = |source| ListenError {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(fail(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                "another elicitd serves it",
            )));
        }
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(e)),
            _ => {}
        }
        let listener = UnixListener::bind(path).map_err(fail)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
        Ok(AskerSocket {
            path: path.to_owned(),
            listener,
            bound_here: true,
        })
    }

    /// The socket systemd passed to this process (socket activation,
    /// `LISTEN_FDS` with `LISTEN_PID` naming this process), if any. The
    /// socket's modes are the unit's (`SocketMode=0600`); the uid check on
    /// each peer is the same as for a socket bound here.
    pub fn inherited() -> Result<Option<AskerSocket>, ListenError> {
        // The plain protocol: listenfd alone would also take fds meant for
        // whatever started us when LISTEN_PID is missing.
        let for_us = std::env::var("LISTEN_PID")
            .ok()
            .and_then(|pid| pid.parse::<u32>().ok())
            == Some(std::process::id());
        if !for_us {
            return Ok(None);
        }
        let fail = |source| ListenError {
            path: PathBuf::from("(the socket systemd passed)"),
            source,
        };
        // Also unsets LISTEN_FDS and LISTEN_PID, so that a front-end
        // program started later does not see them.
        let Some(listener) = listenfd::ListenFd::from_env()
            .take_unix_listener(0)
            .map_err(fail)?
        else {
            return Ok(None);
        };
        // Not inherited by the front-end programs the daemon starts.
        rustix::io::fcntl_setfd(&listener, rustix::io::FdFlags::CLOEXEC).map_err(|e| fail(e.into()))?;
        listener.set_nonblocking(true).map_err(fail)?;
        let path = listener
            .local_addr()
            .ok()
            .and_then(|addr| addr.as_pathname().map(Path::to_owned))
            .unwrap_or_else(|| PathBuf::from("(unnamed)"));
        Ok(Some(AskerSocket {
            path,
            listener: UnixListener::from_std(listener).map_err(fail)?,
            bound_here: false,
        }))
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Serves peers until the task is dropped; `bus` is the address the
    /// broker serves on (`None`: the session bus), which each peer's calls
    /// are re-issued on; a peer's message over `cap` bytes is refused
    /// unread, as on the bus.
    pub async fn serve(self, bus: Option<String>, cap: usize) {
        let own_uid = rustix::process::getuid().as_raw();
        let mut peers = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let uid = stream.peer_cred().map(|c| c.uid());
                        if uid.as_ref().ok() != Some(&own_uid) {
                            tracing::warn!(?uid, "refused an asker-socket peer of another uid");
                            continue;
                        }
                        peers.spawn(relay::serve_peer(stream, bus.clone(), cap));
                    }
                    Err(error) => tracing::warn!(%error, "asker socket accept failed"),
                },
                Some(_) = peers.join_next(), if !peers.is_empty() => {}
            }
        }
    }
}

impl Drop for AskerSocket {
    fn drop(&mut self) {
        // A socket systemd holds must stay: it starts the next daemon.
        if self.bound_here {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
