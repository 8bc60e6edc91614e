//! Delivery: `Response` to the session's owner, its acknowledgement, and
//! sending again after a re-attach.

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, form_path};
use zbus::names::BusName;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::Str;

use super::{Broker, Caller, action_name};
use crate::bus::RequestIface;
use crate::store::FormRecord;
use crate::store::FormState;

impl Broker {
    /// Emits `Response` for an answered form to its session's owner alone.
    pub(super) async fn send_response(&self, record: &FormRecord) {
        let Some(answer) = &record.answer else { return };
        let Some(owner) = self
            .lock()
            .session(&record.session)
            .map(|s| s.record.owner.clone())
        else {
            return;
        };
        let content = answer
            .content
            .as_ref()
            .map(|c| c.to_string())
            .unwrap_or_else(|| "null".into());
        let mut details = Dict::new();
        details.insert(
            "reason".into(),
            Str::from(record.reason.clone().unwrap_or_default()).into(),
        );
        details.insert(
            "answered-by".into(),
            Str::from(record.answered_by.clone().unwrap_or_default()).into(),
        );
        let path = form_path(&record.session, &record.id.to_string());
        let sent = async {
            let emitter = SignalEmitter::new(&self.conn, path.as_str())?
                .set_destination(BusName::try_from(owner.as_str())?);
            RequestIface::response(&emitter, action_name(&answer.action), &content, details).await
        }
        .await;
        if let Err(error) = sent {
            // The owner may be gone for now; Redeliver brings it back.
            tracing::warn!(form = record.id, %error, "could not send the response");
        }
    }

    /// The owner has the outcome: record it in history and forget the
    /// answer's content.
    pub async fn acknowledge(&self, caller: &Caller, id: u64) -> Result<(), Error> {
        let session = self.session_of_form(id)?;
        self.check_owner(caller, &session)?;
        let (record, request) = self.lock().begin_acknowledge(id)?;
        // Flushed lazily: losing it repeats a delivery, which clients drop.
        self.store.write_soon(self.retired_batch(&record, &request, true));
        self.lock().remove_form(id);
        self.forget_retired(&record).await;
        self.form_changed(id, &session, "delivered", record.reason.as_deref().unwrap_or(""));
        Ok(())
    }

    /// Emits `Response` again for every answered, undelivered form of
    /// `session` (after a re-attach).
    pub async fn redeliver(&self, caller: &Caller, session: &str) -> Result<(), Error> {
        self.check_owner(caller, session)?;
        let answered: Vec<FormRecord> = {
            let state = self.lock();
            let ids = state.session(session).map(|s| &s.forms);
            ids.into_iter()
                .flatten()
                .filter_map(|id| state.form(id))
                .filter(|f| f.record.state == FormState::Answered)
                .map(|f| f.record.clone())
                .collect()
        };
        for record in &answered {
            self.send_response(record).await;
        }
        Ok(())
    }
}
