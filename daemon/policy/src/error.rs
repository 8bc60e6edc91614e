//! The errors of the policy engine.

use std::path::PathBuf;

/// What can go wrong when loading rules, watching them or storing
/// remembered choices.
///
/// A broken rules file is not among them: it is skipped and reported (see
/// [`crate::Policy::problems`]), because one typo must not take the others
/// down with it.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The compiled-in default rules do not load: a bug in this build.
    #[error("the built-in rules file {name} does not load: {detail}")]
    Builtin {
        /// The built-in file's name.
        name: &'static str,
        /// Why it does not load.
        detail: String,
    },
    /// The remembered-choices tree could not be read or written.
    #[error("remembered choices: {0}")]
    Store(#[from] sled::Error),
    /// A remembered choice could not be encoded or decoded.
    #[error("remembered choice {id}: {source}")]
    Record {
        /// The choice's id.
        id: u64,
        /// The encoding problem.
        source: serde_json::Error,
    },
    /// The rules directories could not be watched.
    #[error("cannot watch {path}: {source}")]
    Watch {
        /// The directory (or its nearest existing ancestor).
        path: PathBuf,
        /// The watcher's error.
        source: notify::Error,
    },
}
