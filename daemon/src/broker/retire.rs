//! Retirement: a form that ends (closed, its session gone, or its outcome
//! acknowledged) leaves the queue for history.

use std::sync::Arc;

use elicit_proto::dbus::form_path;
use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, Mode};

use super::state::Form;
use super::{Broker, action_name};
use crate::bus::RequestIface;
use crate::store::{FormRecord, FormState, HistoryRecord, Written, now_ms};

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
        let Some(first) = dropping.first() else {
            return Ok(());
        };
        let written = async {
            let first = self.write_retired(&first.0, &first.1, false)?;
            for (record, request) in &dropping[1..] {
                let _same_commit = self.write_retired(record, request, false)?;
            }
            Ok::<_, Error>(self.store.commit(first).await?)
        };
        if let Err(error) = written.await {
            let mut state = self.lock();
            for (record, _) in &dropping {
                state.abandon_change(record.id);
            }
            return Err(error);
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

    /// Moves a finished form from the queue to history.
    pub(super) async fn retire(&self, form: &Form, delivered: bool) -> Result<(), Error> {
        let _flushed_soon = self.write_retired(&form.record, &form.request, delivered)?;
        self.store.flush_soon();
        self.forget_retired(&form.record).await;
        Ok(())
    }

    /// Writes a finished form's history record and removes its record;
    /// commit the returned write to wait for it, or ask for a lazy flush.
    /// Lazily flushed, a lost acknowledgement brings the form back
    /// answered with its content erased, which start-up reads as
    /// delivered (see `load_content`).
    pub(super) fn write_retired(
        &self,
        record: &FormRecord,
        request: &Elicitation,
        delivered: bool,
    ) -> Result<Written, Error> {
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
        // The first write's generation: a reopen after it loses it too.
        let written = self
            .store
            .add_history(&history, self.config.history.max_records)?;
        let _same_generation_or_later = self.store.remove_form(record.id)?;
        Ok(written)
    }

    /// After [`Broker::write_retired`]: erases the answer's content and
    /// the form's object.
    pub(super) async fn forget_retired(&self, record: &FormRecord) {
        // Before sled's removal is durable: a crash in between finds the
        // form answered with its content file gone, and knows from that
        // that it was acknowledged (see `load_content`).
        self.erase_answer(record.id);
        let path = form_path(&record.session, &record.id.to_string());
        let _ = self
            .conn
            .object_server()
            .remove::<RequestIface, _>(path.as_str())
            .await;
    }
}
