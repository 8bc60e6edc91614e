//! What `wrap` changed, kept under elicitd's state directory
//! (`$XDG_STATE_HOME/elicitd/wrap`) until `unwrap` has given it back: the
//! whole file as it was, and each entry before and after.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::write::replace_private;

/// The record of one host file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backup {
    /// The host file.
    pub path: PathBuf,
    /// The whole file before the first `wrap`; dropped once the file is
    /// seen changed by someone else, when only entries can come back.
    pub original: Option<String>,
    /// The whole file as `wrap` last wrote it.
    pub written: String,
    /// The entries `wrap` changed.
    pub entries: Vec<Saved>,
}

/// One entry `wrap` changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// The keys down to the object holding it.
    pub path: Vec<String>,
    /// Its name.
    pub name: String,
    /// Its text before `wrap` (JSON and YAML).
    pub original: Option<String>,
    /// Its text right after.
    pub wrapped: Option<String>,
    /// Whether it had an `args` key before.
    pub had_args: bool,
}

/// The folder of backups.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// Held while a command edits host files: one `wrap` or `unwrap` at a
/// time, so that two never interleave their read, backup and write.
#[derive(Debug)]
pub struct Lock {
    _file: std::fs::File,
}

impl Store {
    /// Backups in `dir` (made, mode 0700, when first written).
    pub fn new(dir: PathBuf) -> Store {
        Store { dir }
    }

    /// Where the backup of `host_file` is: its path, `/` and `%` escaped.
    fn file(&self, host_file: &Path) -> PathBuf {
        let name = host_file
            .to_string_lossy()
            .replace('%', "%25")
            .replace('/', "%2F");
        self.dir.join(format!("{name}.json"))
    }

    fn make_dir(&self) -> Result<(), Error> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(Error::io(&self.dir))
    }

    /// Takes the lock, waiting for another `wrap` or `unwrap` to finish.
    pub fn lock(&self) -> Result<Lock, Error> {
        self.make_dir()?;
        let path = self.dir.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(Error::io(&path))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).map_err(|e| Error::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        Ok(Lock { _file: file })
    }

    /// The backup of `host_file`, if there is one.
    pub fn load(&self, host_file: &Path) -> Result<Option<Backup>, Error> {
        let path = self.file(host_file);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| Error::Backup {
                    path,
                    reason: e.to_string(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Io { path, source: e }),
        }
    }

    /// Writes `backup` (mode 0600: host files may hold tokens).
    pub fn save(&self, backup: &Backup) -> Result<(), Error> {
        self.make_dir()?;
        let path = self.file(&backup.path);
        let mut bytes = serde_json::to_vec_pretty(backup).map_err(|e| Error::Backup {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        bytes.write_all(b"\n").map_err(Error::io(&path))?;
        replace_private(&path, &bytes)
    }

    /// Forgets the backup of `host_file`: everything came back.
    pub fn remove(&self, host_file: &Path) -> Result<(), Error> {
        let path = self.file(host_file);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::Io { path, source: e }),
        }
    }
}
