//! The storage thread: a plain thread that alone touches sled and the
//! answer files.
//!
//! It takes batches from a bounded channel and group-commits whatever is
//! queued: each batch's writes in order, then one sled flush and one sync
//! ([`crate::durable`]) for all of them, then one result per batch. A
//! failed write or flush fails the whole group and poisons the handle
//! (sled 0.34 keeps its first I/O error); the database is opened again on
//! this thread before the next group, which brings back what was durable
//! and nothing else. sled's `Drop` flushes, and on a full disk that flush
//! waits for space for ever: the old handle is dropped on a thread of its
//! own, so that this one goes on answering, with the cause, meanwhile.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;

use elicitd_policy::Remembered;
use serde::de::DeserializeOwned;

use super::batch::Op;
use super::handles::Handles;
use super::jobs::{Gone, Job, LAZY_FLUSH, Loaded, Outcome, next_job};
use super::status::Status;
use super::{FormRecord, SessionRecord, StoreError};
use crate::answers::AnswerFiles;
use crate::durable::{Durable, SyncMode};

/// Batches applied and flushed together at most.
const GROUP: usize = 256;

/// Where the storage thread keeps the id counter (see `Store::next_id`).
const NEXT_ID_KEY: &[u8] = b"elicitd/next-id";

/// Which tree a write went to, for its undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TreeId {
    Sessions,
    Forms,
    History,
    Registrations,
}

/// The values that keys had before a group that failed: sled's handle may
/// still make such a write durable after all (dropping a poisoned handle
/// flushes it, and that flush may succeed once space is back), so the
/// first group that succeeds after a failure puts these back. Only the
/// oldest value of each key is kept, which bounds it by the keys touched.
type Undo = std::collections::HashMap<(TreeId, Vec<u8>), Option<sled::IVec>>;

/// The thread's own state.
pub(super) struct Worker {
    dir: PathBuf,
    handles: Option<Handles>,
    /// A write or flush failed: the handle must be reopened first.
    poisoned: bool,
    /// Why it was poisoned, for the errors of calls until it reopens.
    cause: String,
    durable: Durable,
    answers: AnswerFiles,
    /// sled counts a tree by walking it; retention needs the count on
    /// every insert, so it is kept here.
    history_len: usize,
    /// Writes applied that no flush has covered yet.
    unflushed: bool,
    status: Arc<Status>,
    next_id: Arc<AtomicU64>,
    /// The counter value last made durable.
    stored_next_id: u64,
    /// What to put back before anything else (see [`Undo`]).
    pending_undo: Undo,
}

fn all<T: DeserializeOwned>(tree: &sled::Tree) -> Result<Vec<T>, StoreError> {
    tree.iter()
        .map(|item| Ok(serde_json::from_slice(&item?.1)?))
        .collect()
}

fn policy(error: elicitd_policy::PolicyError) -> StoreError {
    StoreError::Write(error.to_string())
}

impl Worker {
    /// Opens the store in `dir` and reads everything durable.
    pub(super) fn open(
        dir: &Path,
        sync: SyncMode,
        status: Arc<Status>,
        next_id: Arc<AtomicU64>,
    ) -> Result<(Worker, Loaded), StoreError> {
        let answers = AnswerFiles::open(dir, sync)?;
        let handles = Handles::open(dir)?;
        let durable = Durable::open(dir, sync)?;
        let mut worker = Worker {
            dir: dir.to_owned(),
            history_len: handles.history.len(),
            handles: Some(handles),
            poisoned: false,
            cause: String::new(),
            durable,
            answers,
            unflushed: false,
            status,
            next_id,
            stored_next_id: 0,
            pending_undo: Undo::new(),
        };
        let loaded = worker.load()?;
        Ok((worker, loaded))
    }

    fn handles(&self) -> Result<&Handles, StoreError> {
        self.handles
            .as_ref()
            .ok_or_else(|| StoreError::Closed(self.cause.clone()))
    }

    fn load(&mut self) -> Result<Loaded, StoreError> {
        let h = self.handles()?;
        let sessions: Vec<SessionRecord> = all(&h.sessions)?;
        let mut forms = Vec::new();
        for mut record in all::<FormRecord>(&h.forms)? {
            let mut erased = false;
            if record.content_in_file {
                match self.answers.read(record.id)? {
                    Some(content) => {
                        if let Some(answer) = record.answer.as_mut() {
                            answer.content = Some(content);
                        }
                    }
                    None => erased = true,
                }
            }
            forms.push((record, erased));
        }
        let registrations: Vec<(String, Vec<u8>)> = h
            .registrations
            .iter()
            .map(|item| {
                let (key, value) = item?;
                Ok((String::from_utf8_lossy(&key).into_owned(), value.to_vec()))
            })
            .collect::<Result<_, StoreError>>()?;
        let remembered = Remembered::new(h.remembered.clone()).list().map_err(policy)?;
        // Ids: never one that a durable record holds, nor one handed out
        // before (the counter kept at every group, and sled's own id
        // generator, which the ids came from before this counter).
        let stored: u64 =
            h.db.get(NEXT_ID_KEY)?
                .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
                .map_or(0, u64::from_be_bytes);
        let legacy = h.db.generate_id()? + 1;
        let highest = forms
            .iter()
            .map(|(f, _)| f.id)
            .chain(sessions.iter().filter_map(|s| s.id.parse().ok()))
            .chain(registrations.iter().filter_map(|(id, _)| id.parse().ok()))
            .max()
            .unwrap_or(0);
        let next = stored.max(legacy).max(highest + 1);
        self.next_id.store(next, Ordering::SeqCst);
        let answer_files = self.answers.forms()?;
        Ok(Loaded {
            sessions,
            forms,
            answer_files,
            registrations,
            remembered,
        })
    }

    /// Serves batches until every sender is gone.
    pub(super) fn run(mut self, jobs: Receiver<Job>) {
        loop {
            let wait = if self.unflushed { Some(LAZY_FLUSH) } else { None };
            let first = match next_job(&jobs, wait) {
                Ok(first) => first,
                Err(Gone) => {
                    // What was left to a lazy flush goes now.
                    if self.unflushed
                        && let Err(error) = self.flush()
                    {
                        tracing::warn!(%error, "the last delayed writes were not flushed");
                    }
                    return;
                }
            };
            let mut group: Vec<Job> = first.into_iter().collect();
            while group.len() < GROUP {
                match jobs.try_recv() {
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
            self.commit_group(group);
        }
    }

    /// Applies every batch of `group` in order, flushes once, and tells
    /// each waiter; any failure fails them all and changes nothing durable.
    /// A group that nobody waits for is applied but not flushed: it goes
    /// with the next group, or alone once [`LAZY_FLUSH`] has passed (an
    /// empty group, which the idle loop sends), so that an acknowledgement
    /// does not cost a sync of its own in front of the next submission.
    fn commit_group(&mut self, group: Vec<Job>) {
        let flush_now = group.is_empty() || group.iter().any(|job| job.reply.is_some());
        // A waiter that gave up (its bound passed while the batch was
        // queued) was told its write failed: it must not happen after all.
        let group: Vec<Job> = group
            .into_iter()
            .filter(|job| job.reply.as_ref().is_none_or(|r| !r.is_closed()))
            .collect();
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(group.len());
        let mut files_written = Vec::new();
        let mut undo = Undo::new();
        let result = self.reopen_if_poisoned().and_then(|()| {
            self.status.doing("writing to sled");
            self.put_back()?;
            for job in &group {
                let mut outcome = Outcome::default();
                for op in &job.batch.ops {
                    self.apply(op, &mut outcome, &mut files_written, &mut undo)?;
                }
                outcomes.push(outcome);
            }
            if flush_now { self.flush() } else { Ok(()) }
        });
        self.status.done();
        let replies = group.into_iter().map(|job| job.reply);
        match result {
            Ok(()) => {
                self.pending_undo.clear();
                for (reply, outcome) in replies.zip(outcomes) {
                    if let Some(reply) = reply {
                        let _gone = reply.send(Ok(outcome));
                    }
                }
            }
            Err(error) => {
                let message = error.to_string();
                tracing::error!(%message, "a group of writes failed; the store will be reopened");
                self.status.failed(&message);
                if self.handles.is_some() {
                    self.poisoned = true;
                    self.cause = message.clone();
                }
                for (key, value) in undo {
                    self.pending_undo.entry(key).or_insert(value);
                }
                // Their records are not durable: the contents must not
                // outlive them.
                for id in files_written {
                    let _ = self.answers.erase(id);
                }
                self.unflushed = false;
                for reply in replies.flatten() {
                    let _gone = reply.send(Err(StoreError::Write(message.clone())));
                }
            }
        }
    }

    fn apply(
        &mut self,
        op: &Op,
        outcome: &mut Outcome,
        files: &mut Vec<u64>,
        undo: &mut Undo,
    ) -> Result<(), StoreError> {
        let h = self
            .handles
            .as_ref()
            .ok_or_else(|| StoreError::Closed(self.cause.clone()))?;
        // The value a key had before this group, the first time the group
        // touches it.
        let mut before = |id: TreeId, tree: &sled::Tree, key: &[u8]| -> Result<(), StoreError> {
            if let std::collections::hash_map::Entry::Vacant(entry) = undo.entry((id, key.to_vec())) {
                entry.insert(tree.get(key)?);
            }
            Ok(())
        };
        match op {
            Op::PutSession(session) => {
                before(TreeId::Sessions, &h.sessions, session.id.as_bytes())?;
                h.sessions
                    .insert(session.id.as_bytes(), serde_json::to_vec(session)?)?;
            }
            Op::RemoveSession(id) => {
                before(TreeId::Sessions, &h.sessions, id.as_bytes())?;
                h.sessions.remove(id.as_bytes())?;
            }
            Op::PutForm(form) => {
                before(TreeId::Forms, &h.forms, &form.id.to_be_bytes())?;
                h.forms.insert(form.id.to_be_bytes(), serde_json::to_vec(form)?)?;
            }
            Op::WriteAnswer(id, content) => {
                self.answers.write(*id, content)?;
                files.push(*id);
            }
            Op::EraseAnswer(id) => {
                if let Err(error) = self.answers.erase(*id) {
                    // The form is finished either way, and the next
                    // start-up erases what is left.
                    tracing::error!(form = id, %error, "could not erase an answer's content");
                }
            }
            Op::RemoveForm(id) => {
                before(TreeId::Forms, &h.forms, &id.to_be_bytes())?;
                h.forms.remove(id.to_be_bytes())?;
            }
            Op::AddHistory(record, max_records) => {
                let mut key = record.finished_ms.to_be_bytes().to_vec();
                key.extend_from_slice(&record.form.to_be_bytes());
                before(TreeId::History, &h.history, &key)?;
                if h.history.insert(key, serde_json::to_vec(record)?)?.is_none() {
                    self.history_len += 1;
                }
                while self.history_len > *max_records {
                    let Some((oldest, _)) = h.history.first()? else {
                        break;
                    };
                    before(TreeId::History, &h.history, &oldest)?;
                    h.history.remove(&oldest)?;
                    self.history_len -= 1;
                }
            }
            Op::PutRegistration(id, bytes) => {
                before(TreeId::Registrations, &h.registrations, id.as_bytes())?;
                h.registrations.insert(id.as_bytes(), bytes.as_slice())?;
            }
            Op::RemoveRegistration(id) => {
                before(TreeId::Registrations, &h.registrations, id.as_bytes())?;
                h.registrations.remove(id.as_bytes())?;
            }
            Op::Remember {
                server,
                exe,
                cwd,
                verdict,
            } => {
                let tree = Remembered::new(h.remembered.clone());
                let id = tree
                    .remember_for(server, exe.as_deref(), cwd.as_deref(), verdict.clone())
                    .map_err(policy)?;
                outcome.choice = Some(id);
                outcome.remembered = Some(tree.list().map_err(policy)?);
            }
            Op::Forget(id) => {
                let tree = Remembered::new(h.remembered.clone());
                outcome.forgot = tree.forget(*id).map_err(policy)?;
                outcome.remembered = Some(tree.list().map_err(policy)?);
            }
            Op::History(limit) => {
                outcome.history = h
                    .history
                    .iter()
                    .rev()
                    .take(*limit)
                    .map(|item| Ok(serde_json::from_slice(&item?.1)?))
                    .collect::<Result<_, StoreError>>()?;
                return Ok(());
            }
        }
        self.unflushed = true;
        Ok(())
    }

    /// Puts back what a failed group changed (see [`Undo`]), inside the
    /// group about to be flushed.
    fn put_back(&mut self) -> Result<(), StoreError> {
        if self.pending_undo.is_empty() {
            return Ok(());
        }
        let h = self
            .handles
            .as_ref()
            .ok_or_else(|| StoreError::Closed(self.cause.clone()))?;
        for ((id, key), value) in &self.pending_undo {
            let tree = match id {
                TreeId::Sessions => &h.sessions,
                TreeId::Forms => &h.forms,
                TreeId::History => &h.history,
                TreeId::Registrations => &h.registrations,
            };
            match value {
                Some(value) => tree.insert(key.as_slice(), value.clone())?,
                None => tree.remove(key.as_slice())?,
            };
        }
        self.history_len = h.history.len();
        self.unflushed = true;
        Ok(())
    }

    /// One sled flush and one sync for every write applied so far, and
    /// the id counter with them.
    fn flush(&mut self) -> Result<(), StoreError> {
        let next = self.next_id.load(Ordering::SeqCst);
        let h = self.handles()?;
        if next != self.stored_next_id {
            h.db.insert(NEXT_ID_KEY, &next.to_be_bytes())?;
        }
        self.status.doing("flushing sled");
        h.db.flush()?;
        self.status.doing("syncing the state directory");
        self.durable.sync()?;
        self.status.flushed();
        self.stored_next_id = next;
        self.unflushed = false;
        Ok(())
    }

    /// After a failed write: the poisoned handle goes (on a thread of its
    /// own, since its drop flushes and may wait for space for ever) and
    /// the database is opened again. sled locks its file per open file
    /// description, so this fails until the old handle is gone; the next
    /// group tries again.
    fn reopen_if_poisoned(&mut self) -> Result<(), StoreError> {
        if !self.poisoned {
            return Ok(());
        }
        if let Some(old) = self.handles.take() {
            let dropped = std::thread::Builder::new()
                .name("elicitd-sled-drop".into())
                .spawn(move || drop(old));
            if let Err(error) = dropped {
                tracing::error!(%error, "no thread to drop the failed store on");
            }
        }
        self.status.doing("reopening the store");
        match Handles::open(&self.dir) {
            Ok(handles) => {
                self.history_len = handles.history.len();
                self.handles = Some(handles);
                self.poisoned = false;
                self.stored_next_id = 0;
                tracing::warn!(dir = %self.dir.display(), "reopened the store after a failed write");
                Ok(())
            }
            Err(error) => Err(StoreError::Closed(format!("{}; reopening: {error}", self.cause))),
        }
    }
}

#[cfg(test)]
#[path = "thread_tests.rs"]
mod tests;
