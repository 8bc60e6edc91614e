//! Stable storage under sled: what makes a flushed write survive a power cut.
//!
//! sled 0.34 ends each flush with `sync_file_range(WAIT_BEFORE | WRITE |
//! WAIT_AFTER)` on its log. That writes the pages, but it neither flushes the
//! disk's write cache nor persists the file's size, and sled's log grows with
//! every write; its blob files are not synced at all, and its snapshots are
//! renamed into place without a sync of the directory. A kill -9 loses none
//! of that (the kernel holds it), a power cut can. [`Durable::sync`] finishes
//! each flush the way a database must: `fdatasync` of the log (through a
//! descriptor of our own, which serves because the kernel syncs the file, not
//! the descriptor), of each new blob, and `fsync` of every directory whose
//! entries changed since the last sync.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Deserialize;

/// How far a write the broker acknowledges must have gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncMode {
    /// To stable storage: it survives a power cut or a kernel panic
    /// (`fdatasync` after sled's flush).
    #[default]
    Full,
    /// To the kernel: it survives a crash of the daemon (kill -9), not a
    /// power cut. About 0.08 ms less per acknowledged write on an SSD.
    ProcessCrash,
}

/// A failure to bring the store's files to stable storage.
#[derive(Debug, thiserror::Error)]
#[error("cannot sync {path} to stable storage: {source}")]
pub struct SyncError {
    /// The file or directory that failed.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// sled's files in one state directory, and which of them are known to be
/// on stable storage.
#[derive(Debug)]
pub struct Durable {
    mode: SyncMode,
    dir: PathBuf,
    /// sled's log (`DIR/db`), opened read-only: fdatasync needs no write
    /// access.
    log: File,
    /// The directory entries as of the last sync.
    synced: Mutex<Entries>,
}

/// The names in the state directory and in its `blobs` folder.
#[derive(Debug, Default, PartialEq)]
struct Entries {
    top: BTreeSet<OsString>,
    blobs: BTreeSet<OsString>,
}

impl Durable {
    /// Takes charge of the sled store in `dir`, which sled has just opened,
    /// and brings all of it to stable storage once, the directory's own
    /// entry in its parent included (it may have just been created).
    pub fn open(dir: &Path, mode: SyncMode) -> Result<Durable, SyncError> {
        let log_path = dir.join("db");
        let log = File::open(&log_path).map_err(|source| SyncError {
            path: log_path,
            source,
        })?;
        let durable = Durable {
            mode,
            dir: dir.to_owned(),
            log,
            synced: Mutex::new(Entries::default()),
        };
        if mode == SyncMode::Full {
            durable.sync()?;
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_path(parent)?;
            }
        }
        Ok(durable)
    }

    /// Brings every write that sled has flushed so far to stable storage.
    /// Call it after `sled::Db::flush`, inside the group commit, so that
    /// concurrent writers share one sync.
    pub fn sync(&self) -> Result<(), SyncError> {
        if self.mode == SyncMode::ProcessCrash {
            return Ok(());
        }
        self.log.sync_data().map_err(|source| SyncError {
            path: self.dir.join("db"),
            source,
        })?;
        let mut synced = self
            .synced
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let blobs_dir = self.dir.join("blobs");
        let blobs = names(&blobs_dir)?;
        for new in blobs.difference(&synced.blobs) {
            sync_file(&blobs_dir.join(new))?;
        }
        if blobs != synced.blobs {
            sync_path(&blobs_dir)?;
        }
        let top = names(&self.dir)?;
        for new in top.difference(&synced.top) {
            sync_file(&self.dir.join(new))?;
        }
        if top != synced.top {
            sync_path(&self.dir)?;
        }
        *synced = Entries { top, blobs };
        Ok(())
    }
}

/// The names in `dir`; none if it does not exist (sled makes `blobs` only
/// when it needs it).
fn names(dir: &Path) -> Result<BTreeSet<OsString>, SyncError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(source) => {
            return Err(SyncError {
                path: dir.to_owned(),
                source,
            });
        }
    };
    entries
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(|source| SyncError {
            path: dir.to_owned(),
            source,
        })
}

/// fdatasync of a new file, or fsync of a new folder; one that sled removed
/// in the meantime needs nothing.
fn sync_file(path: &Path) -> Result<(), SyncError> {
    match File::open(path) {
        Ok(file) => file.sync_data().map_err(|source| SyncError {
            path: path.to_owned(),
            source,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(SyncError {
            path: path.to_owned(),
            source,
        }),
    }
}

/// fsync of a directory, which makes its entries (creations, renames,
/// removals) durable.
fn sync_path(dir: &Path) -> Result<(), SyncError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| SyncError {
            path: dir.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(mode: SyncMode) -> (tempfile::TempDir, sled::Db, Durable) {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = sled::Config::new().path(dir.path()).open().expect("sled");
        let durable = Durable::open(dir.path(), mode).expect("durable");
        (dir, db, durable)
    }

    #[test]
    fn a_new_blob_and_a_new_snapshot_are_taken_into_the_synced_set() {
        let (dir, db, durable) = store(SyncMode::Full);
        // Far over sled's blob threshold (a quarter of a 512 KiB segment).
        db.insert(b"big", vec![1u8; 300 * 1024]).expect("insert");
        db.flush().expect("flush");
        durable.sync().expect("sync");
        let synced = durable.synced.lock().expect("lock");
        let on_disk = names(&dir.path().join("blobs")).expect("blobs");
        assert!(!on_disk.is_empty(), "sled wrote no blob");
        assert_eq!(synced.blobs, on_disk);
        assert_eq!(synced.top, names(dir.path()).expect("top"));
    }

    #[test]
    fn process_crash_mode_syncs_nothing_of_its_own() {
        let (_dir, db, durable) = store(SyncMode::ProcessCrash);
        db.insert(b"k", b"v").expect("insert");
        db.flush().expect("flush");
        durable.sync().expect("sync");
        assert_eq!(*durable.synced.lock().expect("lock"), Entries::default());
    }

    #[test]
    fn a_missing_log_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let error = Durable::open(dir.path(), SyncMode::Full).expect_err("no sled here");
        assert!(error.to_string().contains("db"), "{error}");
    }
}
