//! The lock Claude Code itself takes on `~/.claude.json`: a directory
//! `~/.claude.json.lock` made with `mkdir` and removed when done (the
//! npm package `proper-lockfile`, seen with strace on Claude Code
//! 2.1.332: `mkdir(".claude.json.lock")`, the rename of its temporary
//! file, `rmdir`). Holding it while we read, edit and write means Claude
//! Code's own rewrites wait for ours and ours for theirs: neither loses
//! the other's change.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::host::{Host, HostFile, Scope};

/// `proper-lockfile`'s default: a lock whose directory was not touched
/// for this long belongs to a writer that died, and is taken over.
const STALE: Duration = Duration::from_secs(10);

/// How often a held lock is looked at again.
const POLL: Duration = Duration::from_millis(5);

/// The lock, held until dropped.
#[derive(Debug)]
pub struct HostLock {
    path: PathBuf,
}

impl Drop for HostLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// Whether the host takes such a lock on `file`.
pub fn host_locks(file: &HostFile) -> bool {
    file.host == Host::Claude && file.scope == Scope::User
}

/// Takes `FILE.lock`, waiting up to `wait` for the host to let it go.
pub fn acquire(file: &Path, wait: Duration) -> Result<HostLock, Error> {
    let mut path = file.as_os_str().to_owned();
    path.push(".lock");
    let path = PathBuf::from(path);
    let start = Instant::now();
    loop {
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(HostLock { path }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let age = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|at| at.elapsed().ok());
                if age.is_some_and(|age| age > STALE) {
                    // A dead writer's: taken over, as proper-lockfile does.
                    let _ = std::fs::remove_dir(&path);
                    continue;
                }
                if start.elapsed() >= wait {
                    return Err(Error::Locked { path });
                }
                // A CLI's own thread, not a runtime's: waiting here
                // blocks nothing else.
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(Error::Io { path, source: e }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_waited_for_and_a_stale_one_taken_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join(".claude.json");
        let held = acquire(&file, Duration::ZERO).expect("free");
        let lock = dir.path().join(".claude.json.lock");
        assert!(lock.is_dir());
        let Err(Error::Locked { path }) = acquire(&file, Duration::from_millis(20)) else {
            panic!("a held lock was taken")
        };
        assert_eq!(path, lock);
        drop(held);
        assert!(!lock.exists());
        // A lock left by a writer that died 60 s ago.
        std::fs::create_dir(&lock).expect("mkdir");
        let old = std::time::SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(&lock)
            .and_then(|d| d.set_modified(old))
            .expect("age the lock");
        let taken = acquire(&file, Duration::ZERO).expect("stale lock taken over");
        drop(taken);
        assert!(!lock.exists());
    }
}
