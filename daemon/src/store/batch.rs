//! A batch: the writes of one broker step, stored together or not at all.
//!
//! A batch is data until it reaches the storage thread, which applies its
//! writes in order and makes them durable with every other batch queued
//! with it (one sled flush, one sync). Serialising happens there too, off
//! the tokio workers.

use elicitd_policy::Verdict;

use super::{FormRecord, HistoryRecord, SessionRecord};

/// One write.
pub(super) enum Op {
    PutSession(SessionRecord),
    RemoveSession(String),
    /// A form whose answer content, if any, went into a `WriteAnswer`
    /// just before it.
    PutForm(FormRecord),
    /// An answer's content, to its own file (see `crate::answers`).
    WriteAnswer(u64, serde_json::Value),
    EraseAnswer(u64),
    RemoveForm(u64),
    /// A history record, and how many records history keeps.
    AddHistory(HistoryRecord, usize),
    PutRegistration(String, Vec<u8>),
    RemoveRegistration(String),
    /// A remembered choice (server, exe, cwd, verdict); the new list of
    /// choices is the batch's result.
    Remember {
        server: String,
        exe: Option<String>,
        cwd: Option<String>,
        verdict: Verdict,
    },
    /// Forgets remembered choice `id`.
    Forget(u64),
    /// Reads the newest `limit` history records.
    History(usize),
}

/// The writes of one step, in order.
#[derive(Default)]
#[must_use = "a batch does nothing until it is committed"]
pub struct Batch {
    pub(super) ops: Vec<Op>,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch").field("ops", &self.ops.len()).finish()
    }
}

/// Whether an answer's content carries no value at all (`{}`), and so
/// nothing that erasure would have to destroy.
fn holds_nothing(content: &serde_json::Value) -> bool {
    content.as_object().is_some_and(|fields| fields.is_empty())
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Whether it holds no write.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Writes a session.
    pub fn put_session(&mut self, session: &SessionRecord) -> &mut Batch {
        self.ops.push(Op::PutSession(session.clone()));
        self
    }

    /// Deletes a session.
    pub fn remove_session(&mut self, id: &str) -> &mut Batch {
        self.ops.push(Op::RemoveSession(id.to_owned()));
        self
    }

    /// Writes a form. An answer's content goes to a synced file of its own
    /// first, so that sled never holds it and never points to a file a
    /// crash could have torn; an empty content (a confirmation's accept)
    /// holds nothing the user typed and stays in sled, which saves the
    /// file's creation and erasure on the commonest answer. Returns
    /// whether the content went to a file.
    pub fn put_form(&mut self, form: &FormRecord) -> bool {
        let mut stored = form.clone();
        let content = stored
            .answer
            .as_mut()
            .and_then(|a| a.content.take_if(|c| !holds_nothing(c)));
        stored.content_in_file = content.is_some();
        if let Some(content) = content {
            self.ops.push(Op::WriteAnswer(form.id, content));
        }
        let in_file = stored.content_in_file;
        self.ops.push(Op::PutForm(stored));
        in_file
    }

    /// Deletes a form, and with it any answer content it held.
    pub fn remove_form(&mut self, id: u64) -> &mut Batch {
        self.ops.push(Op::RemoveForm(id));
        self
    }

    /// Destroys the content file of form `id`, if there is one.
    pub fn erase_answer(&mut self, id: u64) -> &mut Batch {
        self.ops.push(Op::EraseAnswer(id));
        self
    }

    /// Adds a history record, dropping the oldest beyond `max_records`.
    pub fn add_history(&mut self, record: HistoryRecord, max_records: usize) -> &mut Batch {
        self.ops.push(Op::AddHistory(record, max_records));
        self
    }

    /// Writes a front-end registration.
    pub fn put_registration(&mut self, id: &str, bytes: Vec<u8>) -> &mut Batch {
        self.ops.push(Op::PutRegistration(id.to_owned(), bytes));
        self
    }

    /// Deletes a front-end registration.
    pub fn remove_registration(&mut self, id: &str) -> &mut Batch {
        self.ops.push(Op::RemoveRegistration(id.to_owned()));
        self
    }

    /// The batch of the core's `writes`; history keeps `max_history`
    /// records.
    pub fn of_writes(
        writes: Vec<crate::core::Write>,
        max_history: usize,
    ) -> Result<Batch, serde_json::Error> {
        use crate::core::Write;
        let mut batch = Batch::new();
        for write in writes {
            match write {
                Write::PutSession(session) => {
                    batch.put_session(&session);
                }
                Write::RemoveSession(id) => {
                    batch.remove_session(&id);
                }
                Write::PutForm(form) => {
                    let _in_file = batch.put_form(&form);
                }
                Write::RemoveForm(id) => {
                    batch.remove_form(id).erase_answer(id);
                }
                Write::EraseAnswer(id) => {
                    batch.erase_answer(id);
                }
                Write::History(record) => {
                    batch.add_history(record, max_history);
                }
                Write::PutRegistration(id, registration) => {
                    batch.put_registration(&id, serde_json::to_vec(&registration)?);
                }
                Write::RemoveRegistration(id) => {
                    batch.remove_registration(&id);
                }
            }
        }
        Ok(batch)
    }
}
