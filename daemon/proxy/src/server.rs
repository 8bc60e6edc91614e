//! The server's process tree.
//!
//! Hosts start servers through launchers (`npx`, `uvx`, `sh -c`,
//! `docker run`): the proxy's child is often not the server itself, and
//! killing only the child leaves the real server running, holding the
//! pipe whose end the proxy waits for. So the child starts a process group
//! of its own, and every signal goes to the whole group.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

use super::ProxyError;

/// How often [`Server::reap_group`] looks whether the group is empty: the
/// kernel tells a parent when its child ends, not when a group does.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// The running server: its group and, once it ended, the leader's status.
#[derive(Debug)]
pub struct Server {
    group: Option<Pid>,
    exited: oneshot::Receiver<std::io::Result<ExitStatus>>,
}

/// The server's pipes: what the proxy writes to it and reads from it.
pub type Pipes = (ChildStdin, ChildStdout);

impl Server {
    /// Starts `command` in a new process group, with piped stdin and
    /// stdout and the proxy's stderr.
    pub fn spawn(command: &[String]) -> Result<(Server, Pipes), ProxyError> {
        let Some(program) = command.first() else {
            return Err(ProxyError::NoCommand);
        };
        let mut child = Command::new(program)
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Its own group, led by the child: the group id is its pid.
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| ProxyError::Spawn {
                command: program.clone(),
                source,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ProxyError::Io {
                what: "the server's pipes",
                source: std::io::Error::other("not captured"),
            });
        };
        let group = child.id().and_then(|pid| Pid::from_raw(pid as i32));
        let (status, exited) = oneshot::channel();
        tokio::spawn(async move {
            let _ = status.send(child.wait().await);
        });
        Ok((Server { group, exited }, (stdin, stdout)))
    }

    /// A server the proxy reaches through a transport of its own (HTTP)
    /// rather than a process: it has no group, so signals go nowhere, and
    /// it has ended when the transport reports so through the returned
    /// [`Ended`].
    pub fn remote() -> (Server, Ended) {
        let (status, exited) = oneshot::channel();
        (Server { group: None, exited }, Ended(status))
    }

    /// Resolves when the group's leader (the command the proxy started)
    /// has exited; call again only before it resolved.
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

    /// Sends `signal` to every process of the group; a group already empty
    /// is not an error.
    pub fn signal(&self, signal: Signal) {
        if let Some(group) = self.group
            && let Err(error) = rustix::process::kill_process_group(group, signal)
            && error != rustix::io::Errno::SRCH
        {
            tracing::warn!(%error, ?signal, "could not signal the server's process group");
        }
    }

    /// True while some live process of the group exists. A zombie does
    /// not count: where the init process does not reap orphans (some
    /// containers), it would otherwise keep the group "alive" for ever.
    pub fn group_alive(&self) -> bool {
        let Some(group) = self.group else { return false };
        if rustix::process::test_kill_process_group(group).is_err() {
            return false;
        }
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return true;
        };
        entries.flatten().any(|entry| {
            std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| live_group_of(&stat))
                == Some(group.as_raw_nonzero().get())
        })
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
            eprintln!("elicit proxy: processes the server started did not end on TERM; killing them");
            self.signal(Signal::KILL);
        }
    }
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

/// The process group of a `/proc/PID/stat` line, unless the process is a
/// zombie (or dead). The command name may hold spaces and parentheses, so
/// the fields are read after its last `)`: state, ppid, pgrp.
fn live_group_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::live_group_of;

    #[test]
    fn the_group_is_read_after_the_command_name() {
        assert_eq!(live_group_of("42 (a) b) c) S 1 77 77 0"), Some(77));
        assert_eq!(live_group_of("42 (node) Z 1 77 77 0"), None);
    }
}
