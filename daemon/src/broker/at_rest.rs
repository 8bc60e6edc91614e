//! Forms on disk with their answers' contents kept out of sled (see
//! [`crate::answers`] for why): the content goes to its own file inside
//! the same batch as the form's record (see [`Batch::put_form`]).

use std::sync::Arc;

use super::Broker;
use crate::store::{Batch, FormRecord};

impl Broker {
    /// Adds `record` to `batch`, its answer's content to a file of its
    /// own, and notes in `record` where the content went.
    pub(crate) fn put_form_private(batch: &mut Batch, record: &mut FormRecord) {
        record.content_in_file = batch.put_form(record);
    }

    /// Erases every content file (of `files`) that no live answered form
    /// points to: those written before a crash that came before sled
    /// recorded the answer, and those of forms dropped since.
    pub(crate) fn sweep_answers(self: &Arc<Self>, files: &[u64], batch: &mut Batch) {
        for &id in files {
            let live = self.lock().form(&id).is_some_and(|f| f.record.content_in_file);
            if !live {
                tracing::info!(form = id, "erasing an answer's content nobody waits for");
                batch.erase_answer(id);
            }
        }
    }
}
