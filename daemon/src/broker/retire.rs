//! Retirement: a form that ends (closed, its session gone, or its outcome
//! acknowledged) leaves the queue for history.

use std::sync::Arc;

use elicit_proto::dbus::form_path;
use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, Mode};

use super::{Broker, action_name};
use crate::bus::RequestIface;
use crate::store::{Batch, FormRecord, FormState, HistoryRecord, now_ms};

impl Broker {
    /// Removes a form without delivering it, withdrawing it from whoever
    /// shows it; it stays as it was if its retirement cannot be stored.
    pub(crate) async fn drop_form(self: &Arc<Self>, id: u64, reason: &str) -> Result<(), Error> {
        self.drop_forms(&[id], reason).await
    }

    /// [`Broker::drop_form`] for several forms at once, with one flush:
    /// all of them go, or none.
    pub(crate) async fn drop_forms(self: &Arc<Self>, ids: &[u64], reason: &str) -> Result<(), Error> {
        let mut dropping: Vec<(FormRecord, Arc<Elicitation>)> = Vec::new();
        {
            let mut state = self.lock();
            for id in ids {
                let Some((mut record, request)) = state.begin_retire(*id) else {
                    continue;
                };
                if record.state != FormState::Answered {
                    record.answer = Some(Answer::bare(ElicitationAction::Cancel));
                    record.reason = Some(reason.to_owned());
                }
                dropping.push((record, request));
            }
        }
        if dropping.is_empty() {
            return Ok(());
        }
        let mut batch = Batch::new();
        for (record, request) in &dropping {
            batch.append(self.retired_batch(record, request, false));
        }
        if let Err(error) = self.store.commit(batch).await {
            let mut state = self.lock();
            for (record, _) in &dropping {
                state.abandon_change(record.id);
            }
            return Err(error.into());
        }
        let mut sessions = Vec::new();
        for (record, _) in &dropping {
            let id = record.id;
            let form = self.lock().remove_form(id);
            self.forget_deadline(id);
            if let Some(presenter) = form.and_then(|mut f| f.presenter.take()) {
                self.withdraw(&presenter, id, reason);
            }
            self.forget_retired(record).await;
            tracing::info!(form = id, session = %record.session, %reason, "form withdrawn");
            self.form_changed(id, &record.session, "closed", reason);
            if !sessions.contains(&record.session) {
                sessions.push(record.session.clone());
            }
        }
        self.dispatch(sessions);
        Ok(())
    }

    /// A finished form's history record, the removal of its record and the
    /// erasure of its answer's content. Flushed lazily, a lost
    /// acknowledgement brings the form back answered with its content
    /// erased, which start-up reads as delivered (the erasure is done
    /// before the group's flush: see `Loaded::forms`).
    pub(super) fn retired_batch(&self, record: &FormRecord, request: &Elicitation, delivered: bool) -> Batch {
        let origin = self
            .lock()
            .session(&record.session)
            .map(|s| s.record.origin.clone())
            .unwrap_or_default();
        let (fields, url_host) = match &request.mode {
            Mode::Form(f) => (f.fields.iter().map(|f| f.name.clone()).collect(), None),
            Mode::Url { url, .. } => (Vec::new(), url.host_str().map(str::to_owned)),
        };
        let history = HistoryRecord {
            form: record.id,
            session: record.session.clone(),
            origin,
            mode: request.mode_name().to_owned(),
            message: request.message.clone(),
            fields,
            url_host,
            outcome: record
                .answer
                .as_ref()
                .map(|a| action_name(&a.action))
                .unwrap_or("cancel")
                .to_owned(),
            reason: record.reason.clone().unwrap_or_default(),
            answered_by: record.answered_by.clone(),
            delivered,
            created_ms: record.created_ms,
            finished_ms: now_ms(),
        };
        let mut batch = Batch::new();
        batch
            .add_history(history, self.config.history.max_records)
            .remove_form(record.id)
            .erase_answer(record.id);
        batch
    }

    /// After [`Broker::retired_batch`]: the form's object goes.
    pub(super) async fn forget_retired(&self, record: &FormRecord) {
        let path = form_path(&record.session, &record.id.to_string());
        let _ = self
            .conn
            .object_server()
            .remove::<RequestIface, _>(path.as_str())
            .await;
    }
}
