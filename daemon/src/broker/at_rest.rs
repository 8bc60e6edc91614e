//! Forms on disk with their answers' contents kept out of sled (see
//! [`crate::answers`] for why).

use std::sync::Arc;

use elicit_proto::Error;

use super::Broker;
use crate::answers::AnswerFiles;
use crate::store::{FormRecord, Written};

/// Runs blocking file work in place on a multi-threaded runtime, as the
/// store's flush does, and plainly elsewhere.
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// Whether an answer's content carries no value at all (`{}`), and so
/// nothing that erasure would have to destroy.
fn holds_nothing(content: &serde_json::Value) -> bool {
    content.as_object().is_some_and(|fields| fields.is_empty())
}

impl Broker {
    /// Writes `record` to sled; an answer's content goes to its own synced
    /// file first, so that sled never holds it and never points to a file
    /// that a crash could have torn. The content is back in `record` on
    /// return.
    pub(crate) fn put_form_private(&self, record: &mut FormRecord) -> Result<Written, Error> {
        // An empty content (a confirmation's accept) holds nothing the
        // user typed, so sled may keep it: that saves two journal commits
        // (the file's creation and its erasure) on the commonest answer.
        let content = record
            .answer
            .as_mut()
            .and_then(|a| a.content.take_if(|c| !holds_nothing(c)));
        let Some(content) = content else {
            return Ok(self.store.put_form(record)?);
        };
        let written = blocking(|| self.answers.write(record.id, &content));
        record.content_in_file = written.is_ok();
        let stored = written
            .map_err(Error::from)
            .and_then(|()| Ok(self.store.put_form(record)?));
        if stored.is_err() {
            // Its file would outlive the failed write until a restart.
            self.erase_answer(record.id);
        }
        if let Some(answer) = record.answer.as_mut() {
            answer.content = Some(content);
        }
        stored
    }

    /// Destroys the content file of form `id`, if any. Failures are
    /// logged: the form is finished either way, and the next start-up
    /// erases what is left.
    pub(crate) fn erase_answer(&self, id: u64) {
        if let Err(error) = blocking(|| self.answers.erase(id)) {
            tracing::error!(form = id, %error, "could not erase an answer's content");
        }
    }

    /// Puts the content back into a record read from sled. `Ok(false)`:
    /// the content file is gone, which happens only when the form was
    /// acknowledged and erased just before a crash, so it was delivered.
    pub(crate) fn load_content(&self, record: &mut FormRecord) -> Result<bool, Error> {
        if !record.content_in_file {
            return Ok(true);
        }
        let Some(content) = self.answers.read(record.id)? else {
            return Ok(false);
        };
        if let Some(answer) = record.answer.as_mut() {
            answer.content = Some(content);
        }
        Ok(true)
    }

    /// Erases every content file that no live answered form points to:
    /// those written before a crash that came before sled recorded the
    /// answer, and those of forms dropped since.
    pub(crate) fn sweep_answers(self: &Arc<Self>) -> Result<(), Error> {
        let files: &AnswerFiles = &self.answers;
        for id in files.forms()? {
            let live = self.lock().form(&id).is_some_and(|f| f.record.content_in_file);
            if !live {
                tracing::info!(form = id, "erasing an answer's content nobody waits for");
                self.erase_answer(id);
            }
        }
        Ok(())
    }
}
