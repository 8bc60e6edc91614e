//! Forms: submission, answers and listing (delivery, claims, retirement,
//! deadlines and remembered choices have files of their own).

use std::sync::Arc;

use elicit_proto::dbus::{Origin, form_path};
use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, validate_answer};

use super::remember::Remember;
use super::state::FormLimits;
use super::state::{Form, State};
use super::{Broker, Caller};
use crate::bus::RequestIface;
use crate::rules::PolicyVerdict;
use crate::store::{Batch, FormRecord, FormState, RequestText, now_ms};

/// What a submitter may ask for beside the request.
#[derive(Debug, Clone, Default)]
pub struct ElicitOptions {
    /// Seconds until the form is cancelled with reason `timeout`.
    pub timeout_secs: Option<u64>,
    /// An idempotency key: a retry with the same key gets the same form.
    pub submission_id: Option<String>,
}

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

impl Broker {
    /// Queues a form into `session` and returns its request path.
    ///
    /// The policy decides first, so a form it answers is stored once,
    /// already answered, and a form it passes is stored ready to show: one
    /// flush either way before the submission is acknowledged.
    pub async fn elicit(
        self: &Arc<Self>,
        caller: &Caller,
        session: &str,
        request_json: &str,
        options: ElicitOptions,
    ) -> Result<String, Error> {
        let origin = self.owned_session_origin(caller, session)?;
        let request = Elicitation::parse_str(request_json, &self.config.limits)?;
        let text = RequestText::new(request_json).map_err(|e| Error::BadArgument(e.to_string()))?;
        if let Some(sid) = &options.submission_id
            && let Some(existing) = self.submitted(session, sid)
        {
            return Ok(form_path(session, &existing.to_string()));
        }
        // A rule's accept gets the schema's defaults like any other answer.
        let (request, verdict) = self.run_policy(request, &origin, session).await;
        let verdict = verdict.map(|mut verdict| {
            verdict.answer = verdict.answer.completed(&request);
            verdict
        });
        let request = Arc::new(request.without_raw());
        let created_ms = now_ms();
        let timeout = options
            .timeout_secs
            .unwrap_or(self.config.broker.default_timeout_secs);
        // Check the limits and take the place under one lock, so that
        // concurrent submissions cannot overshoot them together.
        let mut record = {
            let mut state = self.lock();
            if let Some(sid) = &options.submission_id
                && let Some(existing) = submitted_in(&state, session, sid)
            {
                return Ok(form_path(session, &existing.to_string()));
            }
            let limits = FormLimits {
                total: self.config.broker.forms_total,
                per_session: self.config.broker.forms_per_session,
            };
            state.check_admission(session, limits)?;
            // The id is taken under the lock so that id order is queue order.
            let id = self.store.next_id();
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
                created_ms,
                deadline_ms: (timeout > 0).then(|| created_ms.saturating_add(timeout.saturating_mul(1000))),
            };
            if let Some(verdict) = &verdict {
                record.state = FormState::Answered;
                record.answer = Some(verdict.answer.clone());
                record.reason = Some(verdict.reason.clone());
                record.answered_by = Some(verdict.decided_by.clone());
            }
            state.admit(live_form(record.clone(), request));
            record
        };
        let id = record.id;
        if let Err(error) = self.persist_new(&mut record).await {
            self.lock().remove_form(id);
            return Err(error);
        }
        self.lock().mark_ready(id);
        tracing::info!(form = id, %session, "form queued");
        self.form_changed(id, session, "queued", "");
        if let Some(verdict) = verdict {
            tracing::info!(form = id, %session, reason = %verdict.reason, by = %verdict.decided_by, "form answered");
            self.send_response(&record).await;
            self.form_changed(id, session, "answered", &verdict.reason);
        } else {
            if let Some(deadline) = record.deadline_ms {
                self.arm_deadline(id, deadline);
            }
            self.dispatch([session.to_owned()]);
        }
        Ok(form_path(session, &id.to_string()))
    }

    /// The origin of `session`, once `caller` is known to own it.
    fn owned_session_origin(&self, caller: &Caller, session: &str) -> Result<Origin, Error> {
        match self.lock().session(session) {
            Some(s) if s.record.owner == caller.name => Ok(s.record.origin.clone()),
            Some(_) => Err(Error::AccessDenied(format!(
                "session {session} belongs to another client"
            ))),
            None => Err(Error::NotFound(format!("no session {session}"))),
        }
    }

    /// The form of `session` submitted with id `sid`, if any.
    fn submitted(&self, session: &str, sid: &str) -> Option<u64> {
        submitted_in(&self.lock(), session, sid)
    }

    /// Asks the rules; `None` leaves the form to a human. Rules run on
    /// tokio's blocking pool: a runaway rule may run up to its budget
    /// (2 s), and no tokio worker may be held that long.
    async fn run_policy(
        &self,
        request: Elicitation,
        origin: &Origin,
        session: &str,
    ) -> (Elicitation, Option<PolicyVerdict>) {
        let Some(policy) = self.policy.clone() else {
            return (request, None);
        };
        let origin = origin.clone();
        let session = session.to_owned();
        let shared = Arc::new(request);
        let asked = shared.clone();
        let verdict = tokio::task::spawn_blocking(move || policy.decide(&asked, &origin, &session))
            .await
            .unwrap_or_else(|error| {
                // A rule that panics decides nothing: the human is asked,
                // as when a rule fails.
                tracing::error!(%error, "the rules panicked; asking the human");
                None
            });
        let request = Arc::try_unwrap(shared).unwrap_or_else(|shared| (*shared).clone());
        (request, verdict)
    }

    async fn persist_new(self: &Arc<Self>, record: &mut FormRecord) -> Result<(), Error> {
        if let Err(error) = self.store_outcome(record).await {
            // In case only the sync failed and sled still holds it, or
            // the storage thread finishes it after its bound.
            let mut undo = Batch::new();
            undo.remove_form(record.id).erase_answer(record.id);
            self.store.write_soon(undo);
            return Err(error);
        }
        let path = form_path(&record.session, &record.id.to_string());
        self.conn
            .object_server()
            .at(path.as_str(), RequestIface::new(self.clone(), record.id))
            .await?;
        Ok(())
    }

    /// A front-end (or claimer) answers a form it was given; with
    /// `remember`, the same answer is given to this server's later forms
    /// (`Remember::Directory`: only from the same working directory).
    pub async fn answer(
        self: &Arc<Self>,
        caller: &Caller,
        id: u64,
        token: &str,
        action: &str,
        content_json: &str,
        remember: Remember,
    ) -> Result<(), Error> {
        let (request, label) = {
            let state = self.lock();
            let form = state
                .form(&id)
                .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
            match &form.presenter {
                Some(p) if p.bus_name == caller.name && p.token == token => {
                    (form.request.clone(), p.label.clone())
                }
                _ => {
                    return Err(Error::AccessDenied(format!(
                        "form {id} is not presented to this connection with this token"
                    )));
                }
            }
        };
        let action = parse_action(action)?;
        let content = match content_json.trim() {
            "" | "null" => None,
            text => Some(
                serde_json::from_str(text)
                    .map_err(|e| Error::BadArgument(format!("content is not JSON: {e}")))?,
            ),
        };
        // Defaults are filled here, once, for every answerer (a front-end,
        // `elicit answer`, a script), before the answer is judged.
        let answer = Answer { action, content }.completed(&request);
        if let Err(errors) = validate_answer(&request, &answer, &self.config.limits) {
            tracing::info!(form = id, errors = errors.len(), "refused an invalid answer");
            let json = serde_json::to_string(&errors).map_err(|e| Error::Storage(e.to_string()))?;
            return Err(Error::InvalidAnswer(json));
        }
        // Only the answer that wins is remembered: one that lost a race
        // (a timeout, another front-end, a claim) was never given.
        let remembered = match remember {
            Remember::No => None,
            scope => Some((self.remember_target(id, scope)?, answer.clone())),
        };
        if !self
            .finish(id, answer, "answered", &label, Some(&caller.name))
            .await?
        {
            return Err(Error::WrongState(format!("form {id} was answered already")));
        }
        if let Some((target, answer)) = remembered {
            self.remember(id, &answer, target).await?;
        }
        Ok(())
    }

    /// Gives a form an outcome: stores it, tells the owner, and presents
    /// the session's next form. False if it had one already, or another
    /// outcome is being stored. Nothing changes unless the outcome was
    /// stored.
    pub(crate) async fn finish(
        self: &Arc<Self>,
        id: u64,
        answer: Answer,
        reason: &str,
        answered_by: &str,
        answerer: Option<&str>,
    ) -> Result<bool, Error> {
        let Some(before) = self.lock().begin_finish(id) else {
            return Ok(false);
        };
        let mut record = {
            let mut record = before.clone();
            record.state = FormState::Answered;
            record.answer = Some(answer);
            record.reason = Some(reason.to_owned());
            record.answered_by = Some(answered_by.to_owned());
            record
        };
        if let Err(error) = self.store_outcome(&mut record).await {
            self.undo_write(&before);
            self.lock().abandon_change(id);
            tracing::error!(form = id, %error, "could not store an outcome; the form stays as it was");
            return Err(error);
        }
        let Some(presenter) = self.lock().settle(id, record.clone()) else {
            // Dropped while the outcome was written: it has ended.
            return Ok(false);
        };
        self.forget_deadline(id);
        if let Some(presenter) = presenter
            && answerer != Some(presenter.bus_name.as_str())
        {
            self.withdraw(&presenter, id, reason);
        }
        tracing::info!(form = id, session = %record.session, %reason, by = %answered_by, "form answered");
        self.send_response(&record).await;
        self.form_changed(id, &record.session, "answered", reason);
        self.dispatch([record.session]);
        Ok(true)
    }

    /// Writes a record (its answer's content to a file of its own) and
    /// makes it durable; a content file written for it does not outlive a
    /// failure.
    async fn store_outcome(&self, record: &mut FormRecord) -> Result<(), Error> {
        let mut batch = Batch::new();
        Self::put_form_private(&mut batch, record);
        Ok(self.store.commit(batch).await?)
    }

    /// After a failed write: puts `before` back, in case the write reached
    /// sled and only its sync failed (a later flush would carry it), or
    /// the storage thread finishes it after its bound.
    fn undo_write(&self, before: &FormRecord) {
        let mut batch = Batch::new();
        let _in_file = batch.put_form(before);
        self.store.write_soon(batch);
    }

    /// The owner withdraws a form (the server, or the host it serves,
    /// cancelled it): reason `cancelled`, as front-ends show it.
    pub async fn close_form(self: &Arc<Self>, caller: &Caller, id: u64) -> Result<(), Error> {
        let session = self.session_of_form(id)?;
        self.check_owner(caller, &session)?;
        self.drop_form(id, "cancelled").await
    }

    /// The session a form belongs to.
    pub(crate) fn session_of_form(&self, id: u64) -> Result<String, Error> {
        self.lock()
            .form(&id)
            .map(|f| f.record.session.clone())
            .ok_or_else(|| Error::NotFound(format!("no form {id}")))
    }

    /// Pending forms as JSON, for `elicit list`: never any answer content.
    pub fn list_forms(&self) -> serde_json::Value {
        let state = self.lock();
        let now = now_ms();
        // A form still being stored has not been accepted yet.
        let forms: Vec<serde_json::Value> = state
            .forms()
            .filter(|form| form.ready)
            .map(|form| {
                let record = &form.record;
                let origin = state.session(&record.session).map(|s| s.record.origin.clone());
                let fields: Vec<&str> = form
                    .request
                    .form()
                    .map(|f| f.fields.iter().map(|f| f.name.as_str()).collect())
                    .unwrap_or_default();
                serde_json::json!({
                    "id": record.id,
                    "session": record.session,
                    "origin": origin,
                    "state": record.state.name(),
                    "mode": form.request.mode_name(),
                    "message": form.request.message,
                    "fields": fields,
                    "presented-to": form.presenter.as_ref().map(|p| p.label.clone()),
                    "age-ms": now.saturating_sub(record.created_ms),
                })
            })
            .collect();
        serde_json::Value::Array(forms)
    }
}

/// A form as the in-memory state holds it: `request` parsed, without its
/// JSON tree (the record holds the text).
pub(crate) fn live_form(record: FormRecord, request: Arc<Elicitation>) -> Form {
    Form {
        record,
        request,
        presenter: None,
        ready: false,
        passed_by: Vec::new(),
        finishing: false,
    }
}

/// The form of `session` that was submitted with id `sid`, if any.
fn submitted_in(state: &State, session: &str, sid: &str) -> Option<u64> {
    let forms = &state.session(session)?.forms;
    forms
        .iter()
        .copied()
        .find(|id| state.form(id).and_then(|f| f.record.submission_id.as_deref()) == Some(sid))
}
