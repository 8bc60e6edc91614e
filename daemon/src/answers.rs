//! Answer contents between the answer and its acknowledgement, kept out of
//! sled.
//!
//! sled is log-structured: a removed or overwritten value stays in its
//! segment files until a compaction happens to rewrite them, and nothing
//! says when that is. An answer's content (whatever the user typed) must
//! not be recoverable from the state directory once its owner has
//! acknowledged it, so it never enters sled: each undelivered content is
//! one file `answers/<form id>`, mode 0600, written and fsynced (the file,
//! then the directory) before sled records the form as answered, and on
//! acknowledgement overwritten with zeros, fsynced, unlinked, and the
//! directory fsynced. sled keeps only the form's state and a flag saying
//! that its content is in a file.
//!
//! Overwriting in place erases the bytes on ext4, xfs and btrfs without
//! compression or snapshots; on copy-on-write file systems with snapshots,
//! or flash whose controller remaps blocks, old blocks may survive below
//! the file system, which only full-disk encryption covers.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::durable::SyncMode;

/// A failure to keep or erase an answer's content.
#[derive(Debug, thiserror::Error)]
pub enum AnswerFileError {
    /// The file system refused.
    #[error("answer file {path}: {source}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A stored content is not JSON (a torn or foreign file).
    #[error("answer file {path} is not JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Why it does not parse.
        source: serde_json::Error,
    },
}

impl From<AnswerFileError> for elicit_proto::Error {
    fn from(error: AnswerFileError) -> Self {
        elicit_proto::Error::Storage(error.to_string())
    }
}

/// The directory of undelivered answer contents.
#[derive(Debug, Clone)]
pub struct AnswerFiles {
    dir: PathBuf,
    /// Whether a stored content must survive a power cut (`[store] sync`).
    sync: SyncMode,
}

impl AnswerFiles {
    /// Uses (and creates, mode 0700) `state_dir/answers`; `sync` as the
    /// store's.
    pub fn open(state_dir: &Path, sync: SyncMode) -> Result<AnswerFiles, AnswerFileError> {
        let dir = state_dir.join("answers");
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(io(&dir))?;
        Ok(AnswerFiles { dir, sync })
    }

    fn path(&self, form: u64) -> PathBuf {
        self.dir.join(form.to_string())
    }

    /// Stores the content of form `form` durably: when this returns, a
    /// crash cannot lose it (with [`SyncMode::ProcessCrash`], a crash of
    /// the daemon; the erasure below is synced in every mode, since it is
    /// about secrecy, not durability).
    pub fn write(&self, form: u64, content: &Value) -> Result<(), AnswerFileError> {
        let path = self.path(form);
        let bytes = serde_json::to_vec(content).map_err(|source| AnswerFileError::Json {
            path: path.clone(),
            source,
        })?;
        // A temporary file renamed into place: the same form may be stored
        // again while sled already points to its file, and a crash must
        // then find the old content or the new, never a torn one. The
        // temporary name is no form id, so start-up erases a leftover.
        let temporary = self.dir.join(format!(".{form}.new"));
        let written = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .and_then(|mut file| {
                file.write_all(&bytes)?;
                if self.sync == SyncMode::Full {
                    file.sync_all()?;
                }
                Ok(())
            });
        if let Err(error) = written {
            // A part of the content may be in it, and on a full disk it
            // holds space that the next write needs.
            let _ = std::fs::remove_file(&temporary);
            return Err(io(&temporary)(error));
        }
        std::fs::rename(&temporary, &path).map_err(io(&path))?;
        if self.sync == SyncMode::ProcessCrash {
            return Ok(());
        }
        self.sync_dir()
    }

    /// The stored content of form `form`; `None` if there is no file, or
    /// one whose erasure had begun (zeros are written from the start), which
    /// means it was acknowledged just before a crash.
    pub fn read(&self, form: u64) -> Result<Option<Value>, AnswerFileError> {
        let path = self.path(form);
        match std::fs::read(&path) {
            Ok(bytes) if bytes.first().is_none_or(|&b| b == 0) => Ok(None),
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| AnswerFileError::Json { path, source }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io(&path)(error)),
        }
    }

    /// Destroys the content of form `form`: zeros over every byte, synced,
    /// then the name removed, synced. No file is no error.
    pub fn erase(&self, form: u64) -> Result<(), AnswerFileError> {
        let path = self.path(form);
        let mut file = match OpenOptions::new().write(true).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(io(&path)(error)),
        };
        overwrite(&mut file).map_err(io(&path))?;
        drop(file);
        std::fs::remove_file(&path).map_err(io(&path))?;
        self.sync_dir()
    }

    /// The forms that have a content file.
    pub fn forms(&self) -> Result<Vec<u64>, AnswerFileError> {
        let mut forms = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let entry = entry.map_err(io(&self.dir))?;
            match entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                Some(form) => forms.push(form),
                None => {
                    // Not ours (a stray editor file): it may hold a copy.
                    let path = entry.path();
                    if let Ok(mut file) = OpenOptions::new().write(true).open(&path) {
                        overwrite(&mut file).map_err(io(&path))?;
                    }
                    std::fs::remove_file(&path).map_err(io(&path))?;
                }
            }
        }
        Ok(forms)
    }

    fn sync_dir(&self) -> Result<(), AnswerFileError> {
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(io(&self.dir))
    }
}

/// Zeros over the whole file, synced to the disk.
fn overwrite(file: &mut File) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let zeros = [0u8; 4096];
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AnswerFileError + '_ {
    move |source| AnswerFileError::Io {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_is_kept_until_erased_and_then_nowhere() {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = AnswerFiles::open(dir.path(), SyncMode::Full).expect("open");
        let content = serde_json::json!({"note": "SECRET_AT_REST"});
        files.write(7, &content).expect("write");
        let mode = std::fs::metadata(dir.path().join("answers/7"))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(files.read(7).expect("read"), Some(content));
        assert_eq!(files.forms().expect("list"), [7]);
        files.erase(7).expect("erase");
        assert_eq!(files.read(7).expect("read"), None);
        assert!(files.forms().expect("list").is_empty());
        files.erase(7).expect("erasing twice is fine");
    }

    #[test]
    fn a_file_whose_erasure_began_reads_as_erased() {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = AnswerFiles::open(dir.path(), SyncMode::Full).expect("open");
        files.write(9, &serde_json::json!({"note": "x"})).expect("write");
        // kill -9 after the first zeros of an acknowledgement's erasure.
        let path = dir.path().join("answers/9");
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[..4].fill(0);
        std::fs::write(&path, bytes).expect("write");
        assert_eq!(files.read(9).expect("read"), None);
    }
}
