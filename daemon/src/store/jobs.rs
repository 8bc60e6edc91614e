//! What travels to the storage thread and back, and how the thread waits
//! for the next batch.

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use elicitd_policy::RememberedChoice;

use super::batch::Batch;
use super::{FormRecord, HistoryRecord, SessionRecord, StoreError};

/// How long a write nobody waits for may stay unflushed, unless another
/// group takes it along sooner.
pub(super) const LAZY_FLUSH: Duration = Duration::from_millis(50);

/// How long the thread looks for the next batch before it sleeps.
const SPIN: Duration = Duration::from_millis(1);

/// What a batch gives back besides success.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// History records read (`Op::History`), newest first.
    pub history: Vec<HistoryRecord>,
    /// The remembered choices after a `Remember` or `Forget`.
    pub remembered: Option<Vec<RememberedChoice>>,
    /// The id of a choice just remembered.
    pub choice: Option<u64>,
    /// Whether a `Forget` found its choice.
    pub forgot: bool,
}

/// A batch on its way to the thread, with whoever waits for it.
pub(super) struct Job {
    pub batch: Batch,
    /// `None`: nobody waits (a lazily flushed write).
    pub reply: Option<tokio::sync::oneshot::Sender<Result<Outcome, StoreError>>>,
}

/// Everything durable, read once at start-up.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every session.
    pub sessions: Vec<SessionRecord>,
    /// Every form in submission order, its answer content put back from
    /// its file. `erased` is true when its content file is gone, which
    /// happens only when it was acknowledged and erased just before a
    /// crash: it was delivered.
    pub forms: Vec<(FormRecord, bool)>,
    /// The forms that have an answer content file.
    pub answer_files: Vec<u64>,
    /// Front-end registrations, by id.
    pub registrations: Vec<(String, Vec<u8>)>,
    /// Remembered choices.
    pub remembered: Vec<RememberedChoice>,
}

/// Every sender is gone.
pub(super) struct Gone;

/// The next job, or `None` once `wait` (if any) has passed without one.
/// Right after a group the next batch is usually on its way (a form's
/// answer follows its submission by two round trips), so the thread polls
/// for [`SPIN`], yielding the CPU to whoever makes it, before it sleeps:
/// waking a sleeping thread cost about a tenth of a millisecond a commit
/// on a virtual machine. An idle daemon sleeps as before.
pub(super) fn next_job(jobs: &Receiver<Job>, wait: Option<Duration>) -> Result<Option<Job>, Gone> {
    let started = Instant::now();
    while started.elapsed() < SPIN {
        match jobs.try_recv() {
            Ok(job) => return Ok(Some(job)),
            Err(TryRecvError::Empty) => std::thread::yield_now(),
            Err(TryRecvError::Disconnected) => return Err(Gone),
        }
    }
    match wait {
        Some(wait) => match jobs.recv_timeout(wait.saturating_sub(SPIN)) {
            Ok(job) => Ok(Some(job)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(Gone),
        },
        None => jobs.recv().map(Some).map_err(|_| Gone),
    }
}
