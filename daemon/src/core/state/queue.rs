//! The queue rules, on the in-memory state alone: admission within the
//! limits, one presented form per session in submission order, pass-on,
//! claims, settling and removal. No bus and no disk here, so the rules are
//! tested as they are; the broker stores first and applies these after.

use std::collections::HashSet;
use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::Origin;

use super::{Form, Frontend, Presenter, State};
use crate::store::{FormRecord, FormState};

/// What goes with a form to whoever presents it: who asks, its session,
/// when it was queued and when it expires.
#[derive(Debug, Clone)]
pub struct ShowInfo {
    /// Who asks.
    pub origin: Origin,
    /// The form's session.
    pub session: String,
    /// When it was queued, in milliseconds since the epoch.
    pub queued_ms: u64,
    /// When it expires (0: never).
    pub deadline_ms: u64,
}

/// Hands `form` to `presenter` and says what goes with it.
fn present(form: &mut Form, presenter: Presenter, origin: &Origin) -> ShowInfo {
    form.presenter = Some(presenter);
    form.record.state = FormState::Presented;
    ShowInfo {
        origin: origin.clone(),
        session: form.record.session.clone(),
        queued_ms: form.record.created_ms,
        deadline_ms: form.record.deadline_ms.unwrap_or(0),
    }
}

/// A `Show` call the core decided, for the driver to make.
#[derive(Debug, Clone)]
pub struct Show {
    /// Who shows it, with the token its answer must carry.
    pub(crate) presenter: Presenter,
    /// The form id.
    pub(crate) form: u64,
    /// Its session.
    pub(crate) session: String,
    /// The request as front-ends receive it.
    pub(crate) request_json: Arc<str>,
    /// Origin, session, times.
    pub(crate) info: ShowInfo,
}

/// What [`State::present_heads`] decided.
#[derive(Debug, Default)]
pub struct Presentations {
    /// Forms handed to a front-end.
    pub(crate) shows: Vec<Show>,
    /// For each form nobody can show: the front-end names a program
    /// started for it must not have.
    pub(crate) unserved: Vec<HashSet<String>>,
}

/// The broker's limits on live forms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FormLimits {
    /// Live forms in all.
    pub(crate) total: usize,
    /// Live forms in one session.
    pub(crate) per_session: usize,
    /// Bytes of request text of all live forms.
    pub(crate) total_bytes: usize,
}

impl State {
    /// Checks the limits for one more form in `session`, of `bytes` of
    /// request text.
    pub(crate) fn check_admission(
        &self,
        session: &str,
        limits: FormLimits,
        bytes: usize,
    ) -> Result<(), Error> {
        if self.forms.len() >= limits.total {
            return Err(Error::LimitExceeded(format!(
                "the broker already holds {} forms (broker.forms-total)",
                limits.total
            )));
        }
        let owning = self
            .sessions
            .get(session)
            .ok_or_else(|| Error::NotFound(format!("no session {session}")))?;
        if owning.forms.len() >= limits.per_session {
            return Err(Error::LimitExceeded(format!(
                "session {session} already has {} forms waiting (broker.forms-per-session)",
                limits.per_session
            )));
        }
        if self.form_bytes.saturating_add(bytes) > limits.total_bytes {
            return Err(Error::OverBudget(format!(
                "the pending forms hold {} bytes and this one is {bytes}, more than the {} of broker.forms-total-bytes",
                self.form_bytes, limits.total_bytes
            )));
        }
        Ok(())
    }

    /// Takes `form` into its session: at the tail of the queue unless it is
    /// answered already. Call [`State::check_admission`] first.
    pub(crate) fn admit(&mut self, form: Form) {
        let id = form.record.id;
        if let Some(owning) = self.sessions.get_mut(&form.record.session) {
            owning.forms.insert(id);
            if form.record.state != FormState::Answered {
                owning.queue.push_back(id);
            }
        }
        self.form_bytes += form.record.request.as_str().len();
        self.forms.insert(id, Box::new(form));
    }

    /// Takes back a form stored before a restart. Call in id order, so
    /// that each queue is in submission order again: a form that was
    /// presented waits again (no front-end holds it any more).
    pub(crate) fn restore(&mut self, mut form: Form) {
        if form.record.state == FormState::Presented {
            form.record.state = FormState::Queued;
        }
        form.presenter = None;
        form.ready = true;
        self.admit(form);
    }

    /// Removes form `id` from its session and from the state.
    pub(crate) fn remove_form(&mut self, id: u64) -> Option<Form> {
        let form = *self.forms.remove(&id)?;
        self.form_bytes = self.form_bytes.saturating_sub(form.record.request.as_str().len());
        if let Some(session) = self.sessions.get_mut(&form.record.session) {
            session.queue.retain(|f| *f != id);
            session.forms.remove(&id);
        }
        Some(form)
    }

    /// Gives form `id` its stored outcome `record`: it leaves its queue
    /// (the next form may be presented) and its presenter is returned.
    /// `None` if the form is gone.
    pub(crate) fn settle(&mut self, id: u64, record: FormRecord) -> Option<Option<Presenter>> {
        let form = self.forms.get_mut(&id)?;
        form.finishing = false;
        form.record = record;
        let presenter = form.presenter.take();
        let session = form.record.session.clone();
        if let Some(session) = self.sessions.get_mut(&session) {
            session.queue.retain(|f| *f != id);
        }
        Some(presenter)
    }

    /// Forgets front-end `bus_name`: the forms it showed go back to the
    /// head of their queues. Returns it, if it was registered, and their
    /// sessions.
    pub(crate) fn frontend_gone(&mut self, bus_name: &str) -> (Option<Frontend>, Vec<String>) {
        let frontend = self
            .frontends
            .remove(bus_name)
            .or_else(|| self.stalled.remove(bus_name));
        let sessions = self
            .forms
            .values_mut()
            .filter(|f| f.presenter.as_ref().is_some_and(|p| p.bus_name == bus_name))
            .map(|form| {
                form.presenter = None;
                form.record.state = FormState::Queued;
                form.record.session.clone()
            })
            .collect();
        (frontend, sessions)
    }

    /// The presenter of form `id` (`bus_name` with `token`) gives it up: it
    /// goes back to the head of its queue, and never to a front-end of
    /// the passer's name again. Returns its session and the passer's name.
    pub(crate) fn pass_on(
        &mut self,
        id: u64,
        bus_name: &str,
        token: &str,
    ) -> Result<(String, String), Error> {
        let form = self
            .forms
            .get_mut(&id)
            .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
        let passer = match &form.presenter {
            Some(p) if p.bus_name == bus_name && p.token == token => p.label.clone(),
            _ => {
                return Err(Error::AccessDenied(format!(
                    "form {id} is not presented to this connection with this token"
                )));
            }
        };
        form.presenter = None;
        form.record.state = FormState::Queued;
        if !form.passed_by.contains(&passer) {
            form.passed_by.push(passer.clone());
        }
        Ok((form.record.session.clone(), passer))
    }

    /// Hands the head form `id` of its session to `claimer`. Returns the
    /// request, the info for it, the presenter it was taken from, and its
    /// session.
    pub(crate) fn claim(
        &mut self,
        id: u64,
        claimer: Presenter,
    ) -> Result<(Arc<str>, ShowInfo, Option<Presenter>, String), Error> {
        let form = self
            .forms
            .get(&id)
            .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
        let session_id = form.record.session.clone();
        if form.record.state == FormState::Answered || form.finishing || form.retiring {
            return Err(Error::WrongState(format!("form {id} was answered already")));
        }
        let session = self
            .sessions
            .get(&session_id)
            .ok_or_else(|| Error::NotFound(format!("no session {session_id}")))?;
        let head = session.queue.front().copied();
        if head != Some(id) {
            return Err(Error::WrongState(format!(
                "form {id} waits behind form {} of its session; answer that one first",
                head.map(|h| h.to_string()).unwrap_or_default()
            )));
        }
        if !form.ready {
            return Err(Error::WrongState(format!("form {id} is still being stored")));
        }
        let origin = session.record.origin.clone();
        let form = self
            .forms
            .get_mut(&id)
            .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
        let previous = form.presenter.take();
        let info = present(form, claimer, &origin);
        Ok((form.record.request.shared(), info, previous, session_id))
    }

    /// Presents the head form of each of `sessions` that shows none, to
    /// the best front-end by `preference`; `token` makes each
    /// presentation's secret.
    pub(crate) fn present_heads(
        &mut self,
        sessions: impl IntoIterator<Item = String>,
        preference: &[String],
        mut token: impl FnMut() -> String,
    ) -> Presentations {
        let mut decided = Presentations::default();
        for session_id in sessions {
            let Some(session) = self.sessions.get(&session_id).filter(|s| !s.ending) else {
                continue;
            };
            let Some(head) = session.queue.front().copied() else {
                continue;
            };
            let origin = session.record.origin.clone();
            let Some(form) = self.forms.get(&head) else {
                continue;
            };
            if !form.ready
                || form.finishing
                || form.retiring
                || form.presenter.is_some()
                || form.record.state == FormState::Answered
            {
                continue;
            }
            let Some(frontend) = self.best_frontend(form, preference) else {
                let unwanted = self.unwanted_for(form);
                if !decided.unserved.contains(&unwanted) {
                    decided.unserved.push(unwanted);
                }
                continue;
            };
            let presenter = Presenter {
                bus_name: frontend.bus_name.clone(),
                token: token(),
                label: frontend.name.clone(),
                frontend_path: Some(frontend.path.clone()),
            };
            let Some(form) = self.forms.get_mut(&head) else {
                continue;
            };
            let info = present(form, presenter.clone(), &origin);
            decided.shows.push(Show {
                presenter,
                form: head,
                session: session_id,
                request_json: form.record.request.shared(),
                info,
            });
        }
        decided
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
