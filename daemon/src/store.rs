//! The durable part of the broker: sessions, forms and history in sled.
//!
//! Every record is JSON under a big-endian key, so that sled's key order is
//! submission order. A form is written and flushed before its submission is
//! acknowledged, and an answer before it is announced, so `kill -9` at any
//! moment loses nothing that anyone was told about; with [`SyncMode::Full`]
//! (the default) each flush is also synced to stable storage
//! ([`crate::durable`]), so that a power cut loses nothing either.
//!
//! A failed write (a full disk) poisons sled 0.34's handle: it keeps its
//! first I/O error and returns it from every later write and flush, even
//! once space is free again. The store then drops the handle and opens the
//! database again before the next call, which brings back what was durable
//! and nothing else; a write that went into the dropped handle fails its
//! [`Store::commit`] instead of passing for durable.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::durable::{Durable, SyncError, SyncMode};

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// sled failed.
    #[error("sled: {0}")]
    Sled(#[from] sled::Error),
    /// A record did not encode or decode.
    #[error("record: {0}")]
    Record(#[from] serde_json::Error),
    /// A flushed write could not be brought to stable storage.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// The database could not be opened again after a failed write; the
    /// next call tries again.
    #[error("the store could not be reopened after a failed write (next call tries again): {0}")]
    Closed(String),
    /// The write went into a database handle that a failed write poisoned,
    /// and was dropped with it.
    #[error("the write was lost: an earlier write to the store failed")]
    Lost,
}

impl From<StoreError> for elicit_proto::Error {
    fn from(error: StoreError) -> Self {
        elicit_proto::Error::Storage(error.to_string())
    }
}

mod records;
mod request_text;
pub use records::{FormRecord, FormState, HistoryRecord, SessionRecord};
pub use request_text::RequestText;

/// The sled database and its trees.
#[derive(Debug, Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

/// What every clone of a [`Store`] shares.
#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    /// `None` between dropping a poisoned database and opening it again
    /// (see [`Store::reopen`]). Every sled call holds the read side, so
    /// that a reopen waits for calls in flight.
    handles: RwLock<Option<Handles>>,
    /// A sled write or flush failed with an I/O error: sled 0.34 keeps
    /// that error and returns it from every later write and flush of the
    /// same handle, even after space is freed, so the handle must be
    /// reopened before anything can be stored again.
    poisoned: AtomicBool,
    /// Why the last reopen failed, for the errors of calls meanwhile.
    closed_by: std::sync::Mutex<String>,
    /// The pending lazy flush, ended by [`Store::stop`].
    lazy_task: std::sync::Mutex<Option<tokio_util::task::AbortOnDropHandle<()>>>,
    /// Counts reopens: a write made into a database that was dropped since
    /// is lost, whatever a later flush of the new one says.
    generation: AtomicU64,
    /// sled counts a tree by walking it; retention needs the count on every
    /// insert, so it is kept here.
    history_len: AtomicUsize,
    flusher: Flusher,
    durable: Durable,
}

/// The database and the trees the broker uses most.
#[derive(Debug)]
struct Handles {
    db: sled::Db,
    sessions: sled::Tree,
    forms: sled::Tree,
    history: sled::Tree,
}

impl Handles {
    fn open(dir: &Path) -> Result<Handles, sled::Error> {
        // No periodic flush: every write that matters is flushed by its
        // caller (group commit below), and sled's 500 ms flusher thread
        // would wake an idle daemon twice a second.
        let db = sled::Config::new()
            .path(dir)
            .mode(sled::Mode::LowSpace)
            .flush_every_ms(None)
            .open()?;
        Ok(Handles {
            sessions: db.open_tree("sessions")?,
            forms: db.open_tree("forms")?,
            history: db.open_tree("history")?,
            db,
        })
    }
}

/// Proof that a write reached sled, to be made durable with
/// [`Store::commit`]: it carries the database generation it went into.
#[derive(Debug, Clone, Copy)]
#[must_use = "a write is not durable until it is committed"]
pub struct Written(u64);

/// Group commit: concurrent callers share one flush.
///
/// sled 0.34's `flush_async` runs each flush on its own small thread pool,
/// and enough concurrent flushes fill that pool with waiters for a write
/// that is queued behind them — a deadlock seen here with 50 submissions at
/// once. One flush at a time, covering every write made before it started,
/// avoids that and costs one fsync per burst.
#[derive(Debug, Default)]
struct Flusher {
    running: tokio::sync::Mutex<()>,
    /// Flush requests so far; each caller's write precedes its request.
    requested: AtomicU64,
    /// Every request up to this one is durable.
    durable: AtomicU64,
    /// The newest request that may wait for [`LAZY_FLUSH`].
    lazy: AtomicU64,
    /// Whether a lazy flush is scheduled.
    lazy_scheduled: AtomicBool,
}

/// How long a write nobody waits for may stay unflushed, unless another
/// flush takes it along sooner.
const LAZY_FLUSH: Duration = Duration::from_millis(50);

impl Store {
    /// Opens (or creates) the store in `dir`; `sync` says whether a flush
    /// also reaches stable storage.
    pub fn open(dir: &Path, sync: SyncMode) -> Result<Store, StoreError> {
        let handles = Handles::open(dir)?;
        Ok(Store {
            shared: Arc::new(Shared {
                dir: dir.to_owned(),
                history_len: AtomicUsize::new(handles.history.len()),
                handles: RwLock::new(Some(handles)),
                poisoned: AtomicBool::new(false),
                closed_by: std::sync::Mutex::default(),
                lazy_task: std::sync::Mutex::default(),
                generation: AtomicU64::new(0),
                flusher: Flusher::default(),
                durable: Durable::open(dir, sync)?,
            }),
        })
    }

    /// Runs `work` on the open database; a poisoned one is reopened first.
    fn with<T>(&self, work: impl FnOnce(&Handles) -> Result<T, StoreError>) -> Result<T, StoreError> {
        if self.shared.poisoned.load(Ordering::SeqCst) {
            self.reopen()?;
        }
        let handles = self
            .shared
            .handles
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let handles = handles.as_ref().ok_or_else(|| {
            StoreError::Closed(
                self.shared
                    .closed_by
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            )
        })?;
        let result = work(handles);
        if let Err(StoreError::Sled(sled::Error::Io(_))) = &result {
            self.shared.poisoned.store(true, Ordering::SeqCst);
        }
        result
    }

    /// A write through [`Store::with`], stamped with its generation.
    fn write(&self, work: impl FnOnce(&Handles) -> Result<(), StoreError>) -> Result<Written, StoreError> {
        self.with(|handles| {
            work(handles)?;
            Ok(Written(self.shared.generation.load(Ordering::SeqCst)))
        })
    }

    /// Drops the poisoned database and opens it again, which brings back
    /// what was durable and forgets what was not (the failed writes, whose
    /// callers were told). sled locks its file per open file description,
    /// so this fails while any handle of the old database (a tree a
    /// caller holds for a moment) is still alive; the next call retries.
    fn reopen(&self) -> Result<(), StoreError> {
        let mut handles = self
            .shared
            .handles
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !self.shared.poisoned.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        *handles = None;
        let opened = Handles::open(&self.shared.dir).inspect_err(|error| {
            *self.shared.closed_by.lock().unwrap_or_else(|p| p.into_inner()) = error.to_string();
        })?;
        self.shared
            .history_len
            .store(opened.history.len(), Ordering::Relaxed);
        *handles = Some(opened);
        self.shared.poisoned.store(false, Ordering::SeqCst);
        tracing::warn!(dir = %self.shared.dir.display(), "reopened the store after a failed write");
        Ok(())
    }

    /// The tree of front-end registrations (their proof secrets). Hold it
    /// only for the call at hand: a reopen needs every handle gone.
    pub fn registrations(&self) -> Result<sled::Tree, StoreError> {
        self.with(|h| Ok(h.db.open_tree("frontends")?))
    }

    /// The tree of remembered choices; hold it only for the call at hand.
    pub fn remembered(&self) -> Result<sled::Tree, StoreError> {
        self.with(|h| Ok(h.db.open_tree("remembered")?))
    }

    /// A new id, unique for the life of the store.
    pub fn next_id(&self) -> Result<u64, StoreError> {
        // sled's ids survive restarts and never repeat; +1 keeps 0 unused.
        self.with(|h| Ok(h.db.generate_id()? + 1))
    }

    /// Makes every write so far durable: flushed by sled and, in
    /// [`SyncMode::Full`], synced to stable storage.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let mine = self.shared.flusher.requested.fetch_add(1, Ordering::SeqCst) + 1;
        self.flush_through(mine).await
    }

    /// Makes `written` durable; fails if it went into a database that was
    /// dropped since (its flush failed, for this caller or another).
    pub async fn commit(&self, written: Written) -> Result<(), StoreError> {
        self.flush().await?;
        if self.shared.generation.load(Ordering::SeqCst) != written.0 {
            return Err(StoreError::Lost);
        }
        Ok(())
    }

    /// Makes every write so far durable within [`LAZY_FLUSH`], for writes
    /// whose loss in a crash only repeats something harmless (a delivered
    /// outcome sent again, which clients drop as a duplicate): the fsync
    /// then rides along with the next submission's or answer's instead of
    /// delaying it.
    pub fn flush_soon(&self) {
        let flusher = &self.shared.flusher;
        let mine = flusher.requested.fetch_add(1, Ordering::SeqCst) + 1;
        flusher.lazy.fetch_max(mine, Ordering::SeqCst);
        if flusher.lazy_scheduled.swap(true, Ordering::SeqCst) {
            return;
        }
        let store = self.clone();
        let task = tokio::spawn(async move {
            tokio::time::sleep(LAZY_FLUSH).await;
            store.shared.flusher.lazy_scheduled.store(false, Ordering::SeqCst);
            let target = store.shared.flusher.lazy.load(Ordering::SeqCst);
            if let Err(error) = store.flush_through(target).await {
                tracing::error!(%error, "a delayed flush failed");
            }
        });
        *self.shared.lazy_task.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(tokio_util::task::AbortOnDropHandle::new(task));
    }

    /// Ends the pending lazy flush, for an orderly stop; call
    /// [`Store::flush`] after it to make those writes durable.
    pub fn stop(&self) {
        let task = self
            .shared
            .lazy_task
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(task);
        self.shared.flusher.lazy_scheduled.store(false, Ordering::SeqCst);
    }

    async fn flush_through(&self, mine: u64) -> Result<(), StoreError> {
        let flusher = &self.shared.flusher;
        let _running = flusher.running.lock().await;
        if flusher.durable.load(Ordering::SeqCst) >= mine {
            return Ok(());
        }
        // Everything requested by now was written before this flush starts.
        let covered = flusher.requested.load(Ordering::SeqCst);
        // In place on this worker (tokio hands its other tasks to the
        // rest): a hop to the blocking pool and back costs two thread
        // wake-ups, more than the fsync itself on a fast disk.
        match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
                tokio::task::block_in_place(|| self.flush_and_sync())?;
            }
            _ => {
                let store = self.clone();
                tokio::task::spawn_blocking(move || store.flush_and_sync())
                    .await
                    .map_err(|e| StoreError::Sled(sled::Error::ReportableBug(e.to_string())))??;
            }
        }
        flusher.durable.store(covered, Ordering::SeqCst);
        Ok(())
    }

    /// sled's flush, then the sync that makes it survive a power cut; one
    /// pair serves every write made before it (the group commit).
    fn flush_and_sync(&self) -> Result<(), StoreError> {
        self.with(|h| Ok(h.db.flush()?))?;
        self.shared.durable.sync()?;
        Ok(())
    }

    /// Writes a session.
    pub fn put_session(&self, session: &SessionRecord) -> Result<Written, StoreError> {
        let bytes = serde_json::to_vec(session)?;
        self.write(|h| {
            h.sessions.insert(session.id.as_bytes(), bytes)?;
            Ok(())
        })
    }

    /// Deletes a session.
    pub fn remove_session(&self, id: &str) -> Result<Written, StoreError> {
        self.write(|h| {
            h.sessions.remove(id.as_bytes())?;
            Ok(())
        })
    }

    /// Writes a form.
    pub fn put_form(&self, form: &FormRecord) -> Result<Written, StoreError> {
        let bytes = serde_json::to_vec(form)?;
        self.write(|h| {
            h.forms.insert(form.id.to_be_bytes(), bytes)?;
            Ok(())
        })
    }

    /// Deletes a form, and with it any answer content it held.
    pub fn remove_form(&self, id: u64) -> Result<Written, StoreError> {
        self.write(|h| {
            h.forms.remove(id.to_be_bytes())?;
            Ok(())
        })
    }

    /// Every session.
    pub fn sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.with(|h| all(&h.sessions))
    }

    /// Every form, in submission order.
    pub fn forms(&self) -> Result<Vec<FormRecord>, StoreError> {
        self.with(|h| all(&h.forms))
    }

    /// Adds a history record, dropping the oldest beyond `max_records`.
    pub fn add_history(&self, record: &HistoryRecord, max_records: usize) -> Result<Written, StoreError> {
        let mut key = record.finished_ms.to_be_bytes().to_vec();
        key.extend_from_slice(&record.form.to_be_bytes());
        let bytes = serde_json::to_vec(record)?;
        let len = &self.shared.history_len;
        self.write(|h| {
            if h.history.insert(key, bytes)?.is_none() {
                len.fetch_add(1, Ordering::Relaxed);
            }
            while len.load(Ordering::Relaxed) > max_records {
                if h.history.pop_min()?.is_none() {
                    break;
                }
                len.fetch_sub(1, Ordering::Relaxed);
            }
            Ok(())
        })
    }

    /// The newest `limit` history records, newest first.
    pub fn history(&self, limit: usize) -> Result<Vec<HistoryRecord>, StoreError> {
        self.with(|h| {
            h.history
                .iter()
                .rev()
                .take(limit)
                .map(|item| Ok(serde_json::from_slice(&item?.1)?))
                .collect()
        })
    }
}

fn all<T: DeserializeOwned>(tree: &sled::Tree) -> Result<Vec<T>, StoreError> {
    tree.iter()
        .map(|item| Ok(serde_json::from_slice(&item?.1)?))
        .collect()
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
