//! The server's process tree.
//!
//! Hosts start servers through launchers (`npx`, `uvx`, `sh -c`,
//! `docker run`): the proxy's child is often not the server itself, and
//! killing only the child leaves the real server running, holding the
//! pipe whose end the proxy waits for. So the server runs under a
//! [`warden`](super::warden), which ends the whole tree on the proxy's
//! orders and when the proxy itself is gone, however it ended. A binary
//! without a warden (a test harness) starts the server in a process group
//! of its own and signals the group.

use std::os::fd::OwnedFd;
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use rustix::process::{Pid, PidfdFlags, Signal};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::{ProxyError, procfs, verify, warden};
use crate::say;

/// How often [`Server::reap_group`] looks whether the group is empty: the
/// kernel tells a parent when its child ends, not when a group does.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// The running server: who ends it and, once it ended, its status.
#[derive(Debug)]
pub struct Server {
    control: Control,
    exited: oneshot::Receiver<std::io::Result<ExitStatus>>,
    /// The task that waits for the command the proxy started; it ends
    /// with the server's handle.
    _waiter: JoinSet<()>,
}

/// Whom a signal for the server goes to.
#[derive(Debug)]
enum Control {
    /// The warden, through a pidfd (which cannot reach a reused pid); it
    /// has exited once the whole tree is gone.
    Warden(OwnedFd),
    /// The server's own process group, led by the command the proxy
    /// started (no warden in this binary).
    Group(Pid),
    /// A server reached through a transport: signals go nowhere.
    Remote,
}

/// The server's pipes: what the proxy writes to it and reads from it.
pub type Pipes = (ChildStdin, ChildStdout);

impl Server {
    /// Starts `command` with piped stdin and stdout and the proxy's
    /// stderr, under a warden when this binary has one; `grace` is how long
    /// the tree may take to end on TERM before KILL.
    pub fn spawn(command: &[String], grace: Duration) -> Result<(Server, Pipes), ProxyError> {
        let Some(program) = command.first() else {
            return Err(ProxyError::NoCommand);
        };
        let spawn_error = |source| ProxyError::Spawn {
            command: program.clone(),
            source,
        };
        let wardened = warden::available() && pidfds_work();
        let mut child = if wardened {
            // The warden starts the program: a missing one is reported
            // here, as the proxy's own error, rather than as its exit code.
            if verify::resolve_executable(program).is_none() {
                return Err(spawn_error(rustix::io::Errno::NOENT.into()));
            }
            Command::new("/proc/self/exe")
                .arg0("elicit-proxy-warden")
                .args(warden::arguments(grace, command))
                .process_group(0)
                .pipes()
                .spawn()
                .map_err(spawn_error)?
        } else {
            Command::new(program)
                .args(&command[1..])
                // Its own group, led by the child: the group id is its pid.
                .process_group(0)
                .kill_on_drop(true)
                .pipes()
                .spawn()
                .map_err(spawn_error)?
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ProxyError::Io {
                what: "the server's pipes",
                source: std::io::Error::other("not captured"),
            });
        };
        let pid = child.id().and_then(|pid| Pid::from_raw(pid as i32));
        let control = match pid {
            Some(pid) if wardened => match rustix::process::pidfd_open(pid, PidfdFlags::empty()) {
                Ok(fd) => Control::Warden(fd),
                // Not reaped yet, so the pid is still the warden's.
                Err(_) => Control::Group(pid),
            },
            Some(pid) => Control::Group(pid),
            None => Control::Remote,
        };
        let (status, exited) = oneshot::channel();
        let mut waiter = JoinSet::new();
        waiter.spawn(wait(child, status));
        let server = Server {
            control,
            exited,
            _waiter: waiter,
        };
        Ok((server, (stdin, stdout)))
    }

    /// A server the proxy reaches through a transport of its own (HTTP)
    /// rather than a process: it has no group, so signals go nowhere, and
    /// it has ended when the transport reports so through the returned
    /// [`Ended`].
    pub fn remote() -> (Server, Ended) {
        let (status, exited) = oneshot::channel();
        (
            Server {
                control: Control::Remote,
                exited,
                _waiter: JoinSet::new(),
            },
            Ended(status),
        )
    }

    /// Resolves when the server has exited (under a warden: its whole
    /// tree); call again only before it resolved.
    pub async fn exited(&mut self) -> Result<ExitStatus, ProxyError> {
        match (&mut self.exited).await {
            Ok(Ok(status)) => Ok(status),
            Ok(Err(source)) => Err(ProxyError::Io {
                what: "waiting for the server",
                source,
            }),
            Err(_) => Err(ProxyError::Io {
                what: "waiting for the server",
                source: std::io::Error::other("the waiting task stopped"),
            }),
        }
    }

    /// Ends the server's tree: TERM now, KILL after the grace period (the
    /// warden's own escalation; without one, the relay's).
    pub fn terminate(&self) {
        self.signal(Signal::TERM);
    }

    /// KILLs the server's tree now.
    pub fn kill(&self) {
        self.signal(Signal::KILL);
    }

    /// Sends `signal` to every process of the tree (the warden's orders:
    /// TERM, and USR1 for KILL); a tree already gone is not an error.
    fn signal(&self, signal: Signal) {
        let sent = match &self.control {
            Control::Warden(fd) => {
                let order = if signal == Signal::KILL {
                    Signal::USR1
                } else {
                    signal
                };
                rustix::process::pidfd_send_signal(fd, order)
            }
            Control::Group(group) => rustix::process::kill_process_group(*group, signal),
            Control::Remote => Ok(()),
        };
        if let Err(error) = sent
            && error != rustix::io::Errno::SRCH
        {
            tracing::warn!(%error, ?signal, "could not signal the server's processes");
        }
    }

    /// True while some live process of the group exists (without a warden;
    /// with one, the tree is gone once the warden exited). A zombie does
    /// not count: where the init process does not reap orphans (some
    /// containers), it would otherwise keep the group "alive" for ever.
    pub fn group_alive(&self) -> bool {
        let Control::Group(group) = self.control else {
            return false;
        };
        rustix::process::test_kill_process_group(group).is_ok()
            && procfs::group_alive(group.as_raw_nonzero().get())
    }

    /// Ends whatever is left of the group: TERM, then KILL after `grace`.
    pub async fn reap_group(&self, grace: Duration) {
        if !self.group_alive() {
            return;
        }
        self.signal(Signal::TERM);
        let gone = tokio::time::timeout(grace, async {
            while self.group_alive() {
                tokio::time::sleep(GROUP_POLL).await;
            }
        })
        .await;
        if gone.is_err() {
            say!("elicit proxy: processes the server started did not end on TERM; killing them");
            self.signal(Signal::KILL);
        }
    }
}

impl Drop for Server {
    /// A relay that ends before its server (an `elicit serve` session
    /// dropped) ends the tree rather than leaving it behind.
    fn drop(&mut self) {
        if let Control::Warden(_) = self.control {
            self.terminate();
        }
    }
}

/// Piped stdin and stdout, the proxy's stderr.
trait Piped {
    fn pipes(&mut self) -> &mut Self;
}

impl Piped for Command {
    fn pipes(&mut self) -> &mut Self {
        self.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
    }
}

async fn wait(mut child: Child, status: oneshot::Sender<std::io::Result<ExitStatus>>) {
    let _ = status.send(child.wait().await);
}

/// Whether pidfds work here (Linux 5.3 and later): the warden needs them.
fn pidfds_work() -> bool {
    static WORK: OnceLock<bool> = OnceLock::new();
    *WORK.get_or_init(|| rustix::process::pidfd_open(rustix::process::getpid(), PidfdFlags::empty()).is_ok())
}

/// How a transport tells its relay that the server it stands for ended.
#[derive(Debug)]
pub struct Ended(oneshot::Sender<std::io::Result<ExitStatus>>);

impl Ended {
    /// The server ended with `code`, which the relay returns.
    pub fn with_code(self, code: u8) {
        use std::os::unix::process::ExitStatusExt;
        let _ = self.0.send(Ok(ExitStatus::from_raw(i32::from(code) << 8)));
    }
}
