//! Forms: submission, answers, outcomes, redelivery and listing.

use std::sync::Arc;

use elicit_proto::dbus::form_path;
use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, validate_answer};

use super::pending::{Finish, Pending};
use super::state::{FormLimits, live_form};
use super::{
    CallId, Caller, Core, Effect, ElicitOptions, Object, Remember, RememberTarget, Reply, ResponseSignal,
    Write,
};
use crate::rules::PolicyVerdict;
use crate::store::{FormRecord, FormState, RequestText};

/// How long an expiry that could not be stored waits before it is tried
/// again (the store may be full, or another outcome was being written).
pub(super) const RETRY_MS: u64 = 1000;

/// Parses an action name.
pub fn parse_action(action: &str) -> Result<ElicitationAction, Error> {
    match action {
        "accept" => Ok(ElicitationAction::Accept),
        "decline" => Ok(ElicitationAction::Decline),
        "cancel" => Ok(ElicitationAction::Cancel),
        other => Err(Error::BadArgument(format!(
            "action must be accept, decline or cancel, not {other:?}"
        ))),
    }
}

/// The wire name of an action.
pub fn action_name(action: &ElicitationAction) -> &'static str {
    match action {
        ElicitationAction::Accept => "accept",
        ElicitationAction::Decline => "decline",
        _ => "cancel",
    }
}

/// Whether an answer's content goes to a file of its own (see
/// `Batch::put_form`): any content but none or `{}`.
fn content_in_file(answer: &Answer) -> bool {
    answer
        .content
        .as_ref()
        .is_some_and(|c| !c.as_object().is_some_and(|fields| fields.is_empty()))
}

impl Core {
    /// `Elicit`: queues a form into `session`; the path goes back once
    /// the form is stored. The rules decided already: a form they answer
    /// is stored once, answered.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn elicit(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        session: &str,
        request: Arc<Elicitation>,
        text: RequestText,
        options: ElicitOptions,
        verdict: Option<PolicyVerdict>,
    ) -> Result<Option<Reply>, Error> {
        self.owned_session(caller, session)?;
        self.not_ending(session)?;
        if let Some(sid) = &options.submission_id
            && let Some(existing) = self.submitted(session, sid)
        {
            // A retry: the same form, once it is stored.
            if let Some(calls) = self.pending_elicit(existing) {
                calls.push(call);
                return Ok(None);
            }
            return Ok(Some(Reply::Path(form_path(session, &existing.to_string()))));
        }
        self.state
            .check_admission(session, self.form_limits(), text.as_str().len())?;
        // Taken here, in call order: id order is queue order.
        let id = self.take_id();
        let timeout = options
            .timeout_secs
            .unwrap_or(self.config.broker.default_timeout_secs);
        let mut record = FormRecord {
            id,
            session: session.to_owned(),
            request: text,
            submission_id: options.submission_id,
            state: FormState::Queued,
            answer: None,
            content_in_file: false,
            reason: None,
            answered_by: None,
            created_ms: now,
            deadline_ms: (timeout > 0).then(|| now.saturating_add(timeout.saturating_mul(1000))),
        };
        let answered = verdict.is_some();
        if let Some(verdict) = verdict {
            record.state = FormState::Answered;
            record.content_in_file = content_in_file(&verdict.answer);
            record.answer = Some(verdict.answer);
            record.reason = Some(verdict.reason);
            record.answered_by = Some(verdict.decided_by);
        }
        self.state.admit(live_form(record.clone(), request));
        let then = Pending::Elicit {
            calls: vec![call],
            id,
            answered,
        };
        self.write(vec![Write::PutForm(record)], Some(then));
        Ok(None)
    }

    /// `Admissible`: the checks of [`Core::elicit`] that need no parsed
    /// request, in its order, so that a form they refuse is never parsed.
    pub(super) fn admissible(
        &self,
        caller: &Caller,
        session: &str,
        bytes: usize,
        submission_id: Option<&str>,
    ) -> Result<Option<Reply>, Error> {
        let origin = self.owned_session(caller, session)?;
        self.not_ending(session)?;
        let retry = submission_id.is_some_and(|sid| self.submitted(session, sid).is_some());
        if !retry {
            self.state.check_admission(session, self.form_limits(), bytes)?;
        }
        Ok(Some(Reply::Origin(origin)))
    }

    fn not_ending(&self, session: &str) -> Result<(), Error> {
        if self.state.session(session).is_some_and(|s| s.ending) {
            return Err(Error::NotFound(format!("session {session} is ending")));
        }
        Ok(())
    }

    fn form_limits(&self) -> FormLimits {
        FormLimits {
            total: self.config.broker.forms_total,
            per_session: self.config.broker.forms_per_session,
            total_bytes: self.config.broker.forms_total_bytes,
        }
    }

    /// The form of `session` that was submitted with id `sid`, if any.
    fn submitted(&self, session: &str, sid: &str) -> Option<u64> {
        let forms = &self.state.session(session)?.forms;
        forms.iter().copied().find(|id| {
            self.state
                .form(id)
                .and_then(|f| f.record.submission_id.as_deref())
                == Some(sid)
        })
    }

    pub(super) fn form_stored(&mut self, calls: Vec<CallId>, id: u64, answered: bool) {
        self.state.mark_ready(id);
        let Some(record) = self.state.form(&id).map(|f| f.record.clone()) else {
            for call in calls {
                self.reply(call, Err(Error::NotFound(format!("form {id} ended meanwhile"))));
            }
            return;
        };
        let session = record.session.clone();
        self.effects
            .push(Effect::Export(Object::Form(session.clone(), id)));
        let path = form_path(&session, &id.to_string());
        for call in calls {
            self.reply(call, Ok(Reply::Path(path.clone())));
        }
        tracing::info!(form = id, %session, "form queued");
        self.form_changed(id, &session, "queued", "");
        if answered {
            let reason = record.reason.clone().unwrap_or_default();
            tracing::info!(form = id, %session, %reason, "form answered by the rules");
            self.send_response(&record);
            self.form_changed(id, &session, "answered", &reason);
        } else {
            if let Some(deadline) = record.deadline_ms {
                self.deadlines.arm(id, deadline);
            }
            self.dispatch([session]);
        }
    }

    /// A new form could not be stored: it goes, and so does whatever of
    /// it a storage thread finishing late would leave.
    pub(super) fn form_not_stored(&mut self, id: u64) {
        self.state.remove_form(id);
        self.write(vec![Write::RemoveForm(id)], None);
    }

    /// `Response` for an answered form, to its session's owner alone.
    pub(super) fn send_response(&mut self, record: &FormRecord) {
        let Some(answer) = record.answer.clone() else {
            return;
        };
        let Some(owner) = self
            .state
            .session(&record.session)
            .map(|s| s.record.owner.clone())
        else {
            return;
        };
        self.effects.push(Effect::Response(ResponseSignal {
            owner,
            session: record.session.clone(),
            form: record.id,
            answer,
            reason: record.reason.clone().unwrap_or_default(),
            answered_by: record.answered_by.clone().unwrap_or_default(),
        }));
    }

    /// `Answer`: a front-end (or claimer) answers a form it was given.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer(
        &mut self,
        call: CallId,
        caller: &Caller,
        id: u64,
        token: &str,
        action: &str,
        content: &str,
        remember: Remember,
    ) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("answer forms")?;
        let form = self
            .state
            .form(&id)
            .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
        let (request, label) = match &form.presenter {
            Some(p) if p.bus_name == caller.name && p.token == token => {
                (form.request.clone(), p.label.clone())
            }
            _ => {
                return Err(Error::AccessDenied(format!(
                    "form {id} is not presented to this connection with this token"
                )));
            }
        };
        let action = parse_action(action)?;
        let content = match content.trim() {
            "" | "null" => None,
            text => Some(
                serde_json::from_str(text)
                    .map_err(|e| Error::BadArgument(format!("content is not JSON: {e}")))?,
            ),
        };
        // Defaults are filled here, once, for every answerer, before the
        // answer is judged.
        let answer = Answer { action, content }.completed(&request);
        if let Err(errors) = validate_answer(&request, &answer, &self.config.limits) {
            tracing::info!(form = id, errors = errors.len(), "refused an invalid answer");
            let json = serde_json::to_string(&errors).map_err(|e| Error::Storage(e.to_string()))?;
            return Err(Error::InvalidAnswer(json));
        }
        // Checked before the answer is given, so that a choice that cannot
        // be remembered refuses the answer instead of half-succeeding.
        let remember = match remember {
            Remember::No => None,
            scope => Some(self.remember_target(id, scope)?),
        };
        let finishing = self.finish(
            Some(call),
            id,
            answer,
            "answered",
            &label,
            Some(&caller.name),
            remember,
        );
        if !finishing {
            return Err(Error::WrongState(format!("form {id} was answered already")));
        }
        Ok(None)
    }

    /// Where a remembered answer to form `id` would apply.
    fn remember_target(&self, id: u64, scope: Remember) -> Result<RememberTarget, Error> {
        if !self.config.policy.enabled {
            return Err(Error::BadArgument(
                "policy is disabled, so nothing can be remembered".into(),
            ));
        }
        let origin = self
            .state
            .form(&id)
            .and_then(|f| self.state.session(&f.record.session))
            .map(|s| s.record.origin.clone())
            .unwrap_or_default();
        let server = origin.server.ok_or_else(|| {
            Error::BadArgument("this form's origin names no server to remember it for".into())
        })?;
        let cwd = match scope {
            Remember::Directory => Some(
                origin
                    .cwd
                    .ok_or_else(|| Error::BadArgument("this form's origin names no directory".into()))?,
            ),
            _ => None,
        };
        Ok(RememberTarget {
            server,
            exe: origin.verified_exe,
            cwd,
        })
    }

    /// Starts giving form `id` an outcome; false if it has one, or another
    /// is being stored. Nothing shows until it is stored.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        &mut self,
        call: Option<CallId>,
        id: u64,
        answer: Answer,
        reason: &str,
        answered_by: &str,
        answerer: Option<&str>,
        remember: Option<RememberTarget>,
    ) -> bool {
        let Some(before) = self.state.begin_finish(id) else {
            return false;
        };
        let mut record = before.clone();
        record.state = FormState::Answered;
        record.content_in_file = content_in_file(&answer);
        record.answer = Some(answer);
        record.reason = Some(reason.to_owned());
        record.answered_by = Some(answered_by.to_owned());
        let finish = Finish {
            call,
            record: record.clone(),
            answerer: answerer.map(str::to_owned),
            remember,
        };
        self.write(vec![Write::PutForm(record)], Some(Pending::Finish(finish)));
        true
    }

    pub(super) fn finish_stored(&mut self, finish: Finish) {
        let Finish {
            call,
            record,
            answerer,
            remember,
            ..
        } = finish;
        let id = record.id;
        let Some(presenter) = self.state.settle(id, record.clone()) else {
            // Retired while the outcome was written: it has ended.
            if let Some(call) = call {
                self.reply(call, Err(Error::WrongState(format!("form {id} was withdrawn"))));
            }
            return;
        };
        self.deadlines.disarm(id);
        let reason = record.reason.clone().unwrap_or_default();
        if let Some(presenter) = presenter
            && answerer.as_deref() != Some(presenter.bus_name.as_str())
        {
            self.withdraw(&presenter, &record.session, id, &reason);
        }
        tracing::info!(form = id, session = %record.session, %reason, "form answered");
        self.send_response(&record);
        self.form_changed(id, &record.session, "answered", &reason);
        if let Some(call) = call {
            let reply = match (remember, &record.answer) {
                (Some(target), Some(answer)) => Reply::Remember {
                    target,
                    answer: answer.clone(),
                },
                _ => Reply::Done,
            };
            self.reply(call, Ok(reply));
        }
        self.dispatch([record.session]);
    }

    pub(super) fn finish_failed(&mut self, now: u64, finish: Finish, error: Error) {
        let id = finish.record.id;
        self.state.abandon_change(id);
        // In case the write reached the store after its bound: the form as
        // the core holds it now goes after it. Not the record from before
        // the outcome: a retirement queued meanwhile would be undone, and
        // the form brought back from the dead (found by the simulation).
        let now_held = self
            .state
            .form(&id)
            .filter(|f| !f.retiring)
            .map(|f| f.record.clone());
        if let Some(record) = now_held {
            self.write(vec![Write::PutForm(record)], None);
        }
        match finish.call {
            Some(call) => {
                tracing::error!(form = id, %error, "could not store an outcome; the form stays as it was");
                self.reply(call, Err(error));
            }
            None => {
                tracing::error!(form = id, %error, "could not expire a form; trying again");
                self.deadlines.arm(id, now.saturating_add(RETRY_MS));
            }
        }
    }

    /// Every deadline due at `now`: cancelled with reason `timeout`; one
    /// that cannot be now (another outcome being written) is tried again
    /// a little later.
    pub(super) fn deadlines_due(&mut self, now: u64) {
        for id in self.deadlines.take_due(now) {
            let answer = Answer::bare(ElicitationAction::Cancel);
            if !self.finish(None, id, answer, "timeout", "timeout", None, None) {
                let pending = self
                    .state
                    .form(&id)
                    .is_some_and(|f| f.record.state != FormState::Answered);
                if pending {
                    self.deadlines.arm(id, now.saturating_add(RETRY_MS));
                }
            }
        }
    }

    /// `Request1.Close`: the owner withdraws a form (reason `cancelled`).
    pub(super) fn close_form(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        id: u64,
    ) -> Result<Option<Reply>, Error> {
        let session = self.session_of_form(id)?;
        self.owned_session(caller, &session)?;
        self.retire_forms(now, vec![call], &[id], "cancelled", None);
        Ok(None)
    }

    /// The session a form belongs to.
    pub(super) fn session_of_form(&self, id: u64) -> Result<String, Error> {
        self.state
            .form(&id)
            .map(|f| f.record.session.clone())
            .ok_or_else(|| Error::NotFound(format!("no form {id}")))
    }

    /// `Redeliver`: `Response` again for every answered, undelivered form.
    pub(super) fn redeliver(&mut self, caller: &Caller, session: &str) -> Result<Option<Reply>, Error> {
        self.owned_session(caller, session)?;
        let answered: Vec<FormRecord> = self
            .state
            .session(session)
            .map(|s| s.forms.iter().copied().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|id| self.state.form(&id))
            .filter(|f| f.ready && f.record.state == FormState::Answered && !f.retiring)
            .map(|f| f.record.clone())
            .collect();
        for record in &answered {
            self.send_response(record);
        }
        Ok(Some(Reply::Done))
    }
}
