//! Running without a service manager: a private state directory, one
//! daemon per state directory, and the files beside sled's that say who
//! holds it and where its logs went.
//!
//! Under systemd the unit's `StateDirectory=` and the journal cover this;
//! under a bare `dbus-daemon` (a `dbus-launch` session, a container, a
//! window manager without systemd) nothing does, and a daemon that outlives
//! its bus blocked the next session's with sled's anonymous lock error.

use std::fs::{DirBuilder, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub use elicit_proto::paths::{PID_FILE, log_file};

/// Why the daemon cannot take its state directory.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// Another daemon holds the lock.
    #[error("another elicitd ({}) holds the state directory {}; stop it first, or pass another --state-dir", holder(.pid), .dir.display())]
    Held {
        /// The state directory.
        dir: PathBuf,
        /// The holder's PID, when it could be read.
        pid: Option<u32>,
    },
    /// A file or directory could not be created, read or locked.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

fn holder(pid: &Option<u32>) -> String {
    match pid {
        Some(pid) => format!("PID {pid}"),
        None => "PID unknown".to_owned(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LifecycleError + '_ {
    move |source| LifecycleError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Creates `dir` (and its parents) if missing; the directory itself is
/// made 0700 because it holds form contents between answer and delivery.
/// An existing directory keeps the mode its owner gave it.
pub fn create_state_dir(dir: &Path) -> Result<(), LifecycleError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(error) => Err(io(dir)(error)),
    }
}

/// The state directory, held: the lock on [`PID_FILE`] lasts as long as
/// this value (and the process), so a second daemon learns who holds it.
#[derive(Debug)]
pub struct StateLock {
    /// Kept open: closing it would drop the lock.
    _file: File,
}

impl StateLock {
    /// Locks `dir/elicitd.pid` and writes this process's PID into it.
    ///
    /// The file is never removed: unlinking a locked file lets a newcomer
    /// lock a fresh inode while a waiter still holds the old one, and two
    /// daemons would each believe they own the directory.
    pub fn acquire(dir: &Path) -> Result<StateLock, LifecycleError> {
        let path = dir.join(PID_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let pid = file
                    .read_to_string(&mut text)
                    .ok()
                    .and_then(|_| text.trim().parse().ok());
                return Err(LifecycleError::Held {
                    dir: dir.to_owned(),
                    pid,
                });
            }
            Err(TryLockError::Error(error)) => return Err(io(&path)(error)),
        }
        file.set_len(0).map_err(io(&path))?;
        file.rewind().map_err(io(&path))?;
        writeln!(file, "{}", std::process::id()).map_err(io(&path))?;
        file.flush().map_err(io(&path))?;
        Ok(StateLock { _file: file })
    }
}

impl StateLock {
    /// [`StateLock::acquire`], waiting up to `patience` for a holder that
    /// is on its way out: when a session's bus goes away, its daemon makes
    /// its last flush while the next session's D-Bus activation may
    /// already be starting this one.
    pub async fn acquire_waiting(
        dir: &Path,
        patience: std::time::Duration,
    ) -> Result<StateLock, LifecycleError> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            match StateLock::acquire(dir) {
                Err(LifecycleError::Held { .. }) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                other => return other,
            }
        }
    }

    /// Keeps the directory locked until this process exits, after sled has
    /// closed its files (sled's own lock goes with the process, later than
    /// the end of `run`, since tasks still hold the store): a successor
    /// that gets this lock then finds sled's free too.
    pub fn hold_until_exit(self) {
        std::mem::forget(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_proto::paths::running_pid;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_state_dir_is_private() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("state/elicitd");
        create_state_dir(&dir).expect("created");
        let mode = std::fs::metadata(&dir).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        create_state_dir(&dir).expect("an existing directory is fine");
    }

    #[test]
    fn a_second_holder_is_told_the_first_ones_pid() {
        let root = tempfile::tempdir().expect("temp dir");
        let first = StateLock::acquire(root.path()).expect("first lock");
        assert_eq!(running_pid(root.path()), Some(std::process::id()));
        // flock locks belong to the open file, so a second open in the same
        // process conflicts just as another process would.
        match StateLock::acquire(root.path()) {
            Err(error @ LifecycleError::Held { .. }) => {
                let text = error.to_string();
                assert!(text.contains(&format!("PID {}", std::process::id())), "{text}");
                assert!(text.contains(&root.path().display().to_string()), "{text}");
            }
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        assert_eq!(running_pid(root.path()), None);
        let again = StateLock::acquire(root.path()).expect("free again");
        let mode = std::fs::metadata(root.path().join(PID_FILE))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(again);
    }
}
