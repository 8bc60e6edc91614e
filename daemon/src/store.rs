//! The durable part of the broker: sessions, forms and history in sled,
//! answer contents in files of their own, all owned by one storage thread.
//!
//! Every record is JSON under a big-endian key, so that sled's key order is
//! submission order. A broker step hands its writes over as one [`Batch`];
//! [`Store::commit`] resolves once the storage thread has made it durable
//! together with every batch queued beside it (group commit: one sled
//! flush, and with [`SyncMode::Full`], the default, one sync to stable
//! storage, see [`crate::durable`]). So `kill -9` or a power cut at any
//! moment loses nothing that anyone was told about.
//!
//! sled never runs on a tokio worker: a disk that stops answering stalls
//! the storage thread only. A write waits for it at most [`WRITE_BOUND`]
//! and then fails with a `Storage` error naming the cause; reads are served
//! from memory (the broker's state, and the mirrors kept here).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elicitd_policy::{RememberedChoice, Verdict};

use crate::answers::AnswerFileError;
use crate::durable::{SyncError, SyncMode};

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
    /// An answer's content could not be kept or read.
    #[error(transparent)]
    Answer(#[from] AnswerFileError),
    /// The database could not be opened again after a failed write; the
    /// next batch tries again.
    #[error("the store could not be reopened after a failed write (the next write tries again): {0}")]
    Closed(String),
    /// The group of writes this batch went with failed, and none of it
    /// was stored.
    #[error("{0}")]
    Write(String),
    /// The storage thread did not finish the batch within [`WRITE_BOUND`].
    #[error("the write did not finish within {bound} s: {0}", bound = WRITE_BOUND.as_secs())]
    Stuck(String),
    /// The storage thread is gone (it panicked, or the daemon is stopping).
    #[error("the storage thread has stopped")]
    Stopped,
}

impl From<StoreError> for elicit_proto::Error {
    fn from(error: StoreError) -> Self {
        elicit_proto::Error::Storage(error.to_string())
    }
}

mod batch;
mod handles;
mod jobs;
mod records;
mod request_text;
mod status;
mod thread;
pub use batch::Batch;
pub use jobs::Loaded;
pub use records::{FormRecord, FormState, HistoryRecord, SessionRecord};
pub use request_text::RequestText;

use batch::Op;
use jobs::{Job, Outcome};
use status::Status;
use thread::Worker;

/// How long a write waits for the storage thread before it fails with the
/// cause: a thread stuck inside sled (a full disk, a dead one) costs writes
/// only.
pub const WRITE_BOUND: Duration = Duration::from_secs(2);

/// Batches that may wait for the storage thread at once; beyond, a write
/// fails at once instead of growing the queue.
const QUEUE: usize = 4096;

/// A handle on the storage thread and what it mirrors in memory.
#[derive(Debug, Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    jobs: SyncSender<Job>,
    status: Arc<Status>,
    /// The next id to hand out: in memory, and stored with every group.
    next_id: Arc<AtomicU64>,
    /// Remembered choices, as durable.
    remembered: Mutex<Vec<RememberedChoice>>,
}

impl Store {
    /// Starts the storage thread on the store in `dir` (created if
    /// missing; `sync` says whether a flush also reaches stable storage)
    /// and returns everything durable in it.
    pub async fn open(dir: &Path, sync: SyncMode) -> Result<(Store, Loaded), StoreError> {
        let status = Arc::new(Status::default());
        let next_id = Arc::new(AtomicU64::new(1));
        let (jobs, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        let (opened, loaded) = tokio::sync::oneshot::channel();
        let thread_dir = dir.to_owned();
        let thread_status = status.clone();
        let thread_next_id = next_id.clone();
        std::thread::Builder::new()
            .name("elicitd-storage".into())
            .spawn(
                move || match Worker::open(&thread_dir, sync, thread_status, thread_next_id) {
                    Ok((worker, loaded)) => {
                        if opened.send(Ok(loaded)).is_ok() {
                            worker.run(receiver);
                        }
                    }
                    Err(error) => {
                        let _gone = opened.send(Err(error));
                    }
                },
            )
            .map_err(|e| StoreError::Write(format!("cannot start the storage thread: {e}")))?;
        let loaded = loaded.await.map_err(|_| StoreError::Stopped)??;
        let store = Store {
            shared: Arc::new(Shared {
                dir: dir.to_owned(),
                jobs,
                status,
                next_id,
                remembered: Mutex::new(loaded.remembered.clone()),
            }),
        };
        Ok((store, loaded))
    }

    /// A new id, unique for the life of the store: taken in memory (so
    /// that id order is the order of the calls), and stored with the next
    /// group, before any record that holds it can be.
    pub fn next_id(&self) -> u64 {
        self.shared.next_id.load(Ordering::SeqCst)
    }

    /// Ids below `next` are taken (the core hands them out): stored with
    /// the next group, before any record that holds one can be.
    pub fn advance_ids(&self, next: u64) {
        self.shared.next_id.fetch_max(next, Ordering::SeqCst);
    }

    /// Queues `batch` now, in call order, and returns what resolves once
    /// it is durable (as [`Store::commit`]).
    pub fn queue_commit(
        &self,
        batch: Batch,
    ) -> impl std::future::Future<Output = Result<(), StoreError>> + Send + 'static {
        let (reply, result) = tokio::sync::oneshot::channel();
        let sent = self.send(Job {
            batch,
            reply: Some(reply),
        });
        let shared = self.shared.clone();
        async move {
            sent?;
            match tokio::time::timeout(WRITE_BOUND, result).await {
                Ok(Ok(outcome)) => outcome.map(drop),
                Ok(Err(_)) => Err(StoreError::Stopped),
                Err(_) => Err(StoreError::Stuck(
                    shared.status.describe(&shared.dir, WRITE_BOUND),
                )),
            }
        }
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        self.shared.jobs.try_send(job).map_err(|error| match error {
            TrySendError::Full(_) => StoreError::Stuck(format!(
                "{QUEUE} writes are waiting already; {}",
                self.shared.status.describe(&self.shared.dir, WRITE_BOUND)
            )),
            TrySendError::Disconnected(_) => StoreError::Stopped,
        })
    }

    async fn run(&self, batch: Batch) -> Result<Outcome, StoreError> {
        let (reply, result) = tokio::sync::oneshot::channel();
        self.send(Job {
            batch,
            reply: Some(reply),
        })?;
        match tokio::time::timeout(WRITE_BOUND, result).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(StoreError::Stopped),
            Err(_) => Err(StoreError::Stuck(
                self.shared.status.describe(&self.shared.dir, WRITE_BOUND),
            )),
        }
    }

    /// Stores `batch` durably: when this returns `Ok`, a crash cannot lose
    /// it. On an error none of it was stored, unless the error is
    /// [`StoreError::Stuck`]: then the storage thread may still finish it,
    /// and a caller that must be sure writes its undo after it.
    #[cfg(test)]
    pub async fn commit(&self, batch: Batch) -> Result<(), StoreError> {
        self.queue_commit(batch).await
    }

    /// Stores `batch` within a few tens of milliseconds, with whatever
    /// group comes next, for writes whose loss in a crash only repeats
    /// something harmless (a delivered outcome sent again, which clients
    /// drop as a duplicate). A failure is logged.
    pub fn write_soon(&self, batch: Batch) {
        if batch.is_empty() {
            return;
        }
        if let Err(error) = self.send(Job { batch, reply: None }) {
            tracing::error!(%error, "a delayed write was not queued");
        }
    }

    /// Makes every write so far durable, those left to [`Store::write_soon`]
    /// included.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.run(Batch::new()).await.map(drop)
    }

    /// The newest `limit` history records, newest first.
    pub async fn history(&self, limit: usize) -> Result<Vec<HistoryRecord>, StoreError> {
        let mut batch = Batch::new();
        batch.ops.push(Op::History(limit));
        Ok(self.run(batch).await?.history)
    }

    /// Every remembered choice.
    pub fn remembered(&self) -> Vec<RememberedChoice> {
        lock(&self.shared.remembered).clone()
    }

    /// Remembers `verdict` for `server` (bound to `exe` and below `cwd`
    /// when given); returns the new choice's id.
    pub async fn remember(
        &self,
        server: &str,
        exe: Option<&str>,
        cwd: Option<&str>,
        verdict: Verdict,
    ) -> Result<u64, StoreError> {
        let mut batch = Batch::new();
        batch.ops.push(Op::Remember {
            server: server.to_owned(),
            exe: exe.map(str::to_owned),
            cwd: cwd.map(str::to_owned),
            verdict,
        });
        let outcome = self.run(batch).await?;
        if let Some(list) = outcome.remembered {
            *lock(&self.shared.remembered) = list;
        }
        outcome
            .choice
            .ok_or_else(|| StoreError::Write("no choice was remembered".into()))
    }

    /// Forgets remembered choice `id`; false if there was none.
    pub async fn forget(&self, id: u64) -> Result<bool, StoreError> {
        let mut batch = Batch::new();
        batch.ops.push(Op::Forget(id));
        let outcome = self.run(batch).await?;
        if let Some(list) = outcome.remembered {
            *lock(&self.shared.remembered) = list;
        }
        Ok(outcome.forgot)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
