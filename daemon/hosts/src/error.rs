//! What can go wrong around the edits themselves (files, backups); what
//! is wrong inside a host file is a reason in its report instead.

use std::path::{Path, PathBuf};

/// A failure to read or write a file, or to read a backup.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The system refused.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The host's own lock on its file stayed held.
    #[error("{path} stayed held (the host is writing its file); try again")]
    Locked {
        /// The lock.
        path: PathBuf,
    },
    /// A backup that cannot be read back.
    #[error("{path}: this backup cannot be read: {reason}")]
    Backup {
        /// The backup file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl Error {
    /// For `map_err`: an I/O error on `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_owned(),
            source,
        }
    }
}
