//! The state directory's privacy: the daemon's own umask, and modes that
//! keep other users out whatever the caller's umask was.
//!
//! D-Bus activation without systemd and `elicit demo` start the daemon
//! with the desktop's usual umask 022, under which sled would create a
//! world-readable database. The directory holds the queue (requests can be
//! sensitive) and, until they are acknowledged, answers.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why the state directory could not be made private.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    /// Creating, reading or changing the mode of a path failed.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StateDirError + '_ {
    move |source| StateDirError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Sets the process umask to 0077, so that everything the daemon (and
/// sled inside it) creates is private to its user from the start.
pub fn restrict_umask() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// Creates `dir` (mode 0700) or tightens an existing one: the directory
/// and every directory below it to 0700, every file to 0600. Returns the
/// paths whose modes were wider, which the caller warns about.
pub fn prepare(dir: &Path) -> Result<Vec<PathBuf>, StateDirError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io(dir))?;
    let mut widened = Vec::new();
    tighten(dir, &mut widened)?;
    Ok(widened)
}

fn tighten(path: &Path, widened: &mut Vec<PathBuf>) -> Result<(), StateDirError> {
    // symlink_metadata: a link planted in the directory is not followed
    // out of it.
    let meta = std::fs::symlink_metadata(path).map_err(io(path))?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let wanted = if meta.is_dir() { 0o700 } else { 0o600 };
    let mode = meta.permissions().mode() & 0o7777;
    if mode != wanted {
        if mode & 0o077 != 0 {
            widened.push(path.to_owned());
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted)).map_err(io(path))?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).map_err(io(path))? {
            let entry = entry.map_err(io(path))?;
            tighten(&entry.path(), widened)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wider_modes_are_tightened_and_reported() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("state");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let db = dir.join("db");
        std::fs::write(&db, b"x").expect("write");
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let widened = prepare(&dir).expect("prepare");
        assert_eq!(widened, [dir.clone(), db.clone()]);
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!((mode(&dir), mode(&db)), (0o700, 0o600));
        assert!(prepare(&dir).expect("again").is_empty());
    }
}
