//! Retirement: a form that ends (closed, its session gone, or its outcome
//! acknowledged) leaves the queue for history, exactly once.

use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, Mode};

use super::forms::{RETRY_MS, action_name};
use super::pending::{Pending, Retire};
use super::{CallId, Caller, Core, Effect, Object, Reply, Write};
use crate::store::{FormRecord, FormState, HistoryRecord};

impl Core {
    /// Retires `ids` without delivering them (cancelled with `reason`
    /// unless answered), and with `ending` the session too, in one batch:
    /// all of it goes, or none. A form being retired already is left to
    /// that retirement.
    pub(super) fn retire_forms(
        &mut self,
        now: u64,
        calls: Vec<CallId>,
        ids: &[u64],
        reason: &str,
        ending: Option<String>,
    ) {
        let mut writes = Vec::new();
        let mut forms = Vec::new();
        for id in ids {
            let Some((mut record, request)) = self.state.begin_retire(*id) else {
                continue;
            };
            if record.state != FormState::Answered {
                record.answer = Some(Answer::bare(ElicitationAction::Cancel));
                record.reason = Some(reason.to_owned());
            }
            writes.push(Write::History(self.history(now, &record, &request, false)));
            writes.push(Write::RemoveForm(record.id));
            forms.push((record.id, record.session.clone()));
        }
        if let Some(session) = &ending {
            writes.push(Write::RemoveSession(session.clone()));
        }
        if writes.is_empty() {
            for call in calls {
                self.reply(call, Ok(Reply::Done));
            }
            return;
        }
        let retire = Retire {
            calls,
            forms,
            reason: reason.to_owned(),
            ending,
        };
        self.write(writes, Some(Pending::Retire(retire)));
    }

    pub(super) fn retire_stored(&mut self, now: u64, retire: Retire) {
        let Retire {
            calls,
            forms,
            reason,
            ending,
        } = retire;
        let mut sessions: Vec<String> = Vec::new();
        for (id, session) in forms {
            let form = self.state.remove_form(id);
            self.deadlines.disarm(id);
            if let Some(presenter) = form.and_then(|mut f| f.presenter.take()) {
                self.withdraw(&presenter, &session, id, &reason);
            }
            self.effects
                .push(Effect::Unexport(Object::Form(session.clone(), id)));
            tracing::info!(form = id, %session, %reason, "form withdrawn");
            self.form_changed(id, &session, "closed", &reason);
            if !sessions.contains(&session) {
                sessions.push(session);
            }
        }
        if let Some(session) = ending {
            self.state.close_session(&session);
            self.idle.touch(now);
            self.effects
                .push(Effect::Unexport(Object::Session(session.clone())));
            tracing::info!(%session, %reason, "session ended");
        }
        for call in calls {
            self.reply(call, Ok(Reply::Done));
        }
        self.resume_deferred_ends(now, &sessions);
        self.dispatch(sessions);
    }

    pub(super) fn retire_failed(&mut self, now: u64, retire: Retire, error: &str) {
        for (id, _) in &retire.forms {
            self.state.abandon_retire(*id);
        }
        let mut sessions: Vec<String> = retire.forms.iter().map(|(_, s)| s.clone()).collect();
        if let Some(session) = &retire.ending {
            // It goes on as it was: its remaining forms may be shown again.
            self.state.cancel_ending(session);
            sessions.push(session.clone());
            if retire.calls.is_empty()
                && let Some(owner) = self.state.session(session).map(|s| s.record.owner.clone())
            {
                // A grace period's end: tried again a little later.
                self.graces
                    .entry((now.saturating_add(RETRY_MS), owner))
                    .or_default()
                    .push(session.clone());
            }
        }
        tracing::error!(%error, reason = %retire.reason, "could not retire forms; they stay");
        for call in retire.calls {
            self.reply(call, Err(Error::Storage(error.to_owned())));
        }
        sessions.dedup();
        self.resume_deferred_ends(now, &sessions);
        self.dispatch(sessions);
    }

    /// Ends that waited for a retirement of one of their forms to be
    /// stored or to fail: they go ahead now, with whatever is left.
    fn resume_deferred_ends(&mut self, now: u64, sessions: &[String]) {
        for session in sessions {
            let free = self.state.session(session).is_some_and(|s| {
                s.forms
                    .iter()
                    .all(|id| self.state.form(id).is_none_or(|f| !f.retiring))
            });
            if !free {
                continue;
            }
            if let Some((calls, reason)) = self.deferred_ends.remove(session) {
                let forms = self.state.begin_ending(session);
                self.retire_forms(now, calls, &forms, &reason, Some(session.clone()));
            }
        }
    }

    /// `Request1.Acknowledge`: the owner has the outcome. It goes to
    /// history at once; flushed lazily, since losing it only repeats a
    /// delivery, which clients drop.
    pub(super) fn acknowledge(&mut self, now: u64, caller: &Caller, id: u64) -> Result<Option<Reply>, Error> {
        let session = self.session_of_form(id)?;
        self.owned_session(caller, &session)?;
        let (record, request) = self.state.begin_acknowledge(id)?;
        let writes = vec![
            Write::History(self.history(now, &record, &request, true)),
            Write::RemoveForm(id),
        ];
        self.write(writes, None);
        self.state.remove_form(id);
        self.effects
            .push(Effect::Unexport(Object::Form(session.clone(), id)));
        self.form_changed(id, &session, "delivered", record.reason.as_deref().unwrap_or(""));
        Ok(Some(Reply::Done))
    }

    /// A finished form's history record: who asked, what, the outcome;
    /// never the answer's values.
    pub(super) fn history(
        &self,
        now: u64,
        record: &FormRecord,
        request: &Elicitation,
        delivered: bool,
    ) -> HistoryRecord {
        let origin = self
            .state
            .session(&record.session)
            .map(|s| s.record.origin.clone())
            .unwrap_or_default();
        let (fields, url_host) = match &request.mode {
            Mode::Form(f) => (f.fields.iter().map(|f| f.name.clone()).collect(), None),
            Mode::Url { url, .. } => (Vec::new(), url.host_str().map(str::to_owned)),
        };
        HistoryRecord {
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
            finished_ms: now,
        }
    }
}
