//! `PassOn`: a front-end that cannot show a form well (a notification with
//! "Open…", or one the user dismissed) hands it to the next-best front-end;
//! `Claim`: a control client takes a form over from whoever shows it.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::Dict;

use super::sessions::secret;
use super::state::Presenter;
use super::{Broker, Caller, present};
use crate::store::FormState;

impl Broker {
    /// The presenter of form `id` (checked by its token, like an answer)
    /// gives it up: the form goes back to the head of its session's queue
    /// and on to the best other front-end, or to a started front-end
    /// program, and never back to a front-end of the passer's name while
    /// the daemon runs. With nobody to take it, it waits, queued.
    pub fn pass_on(self: &Arc<Self>, caller: &Caller, id: u64, token: &str) -> Result<(), Error> {
        let (session, passer) = {
            let mut state = self.lock();
            let form = state
                .forms
                .get_mut(&id)
                .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
            let passer = match &form.presenter {
                Some(p) if p.bus_name == caller.name && p.token == token => p.label.clone(),
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
            (form.record.session.clone(), passer)
        };
        tracing::info!(form = id, %session, frontend = %passer, "form passed on");
        self.form_changed(id, &session, "queued", "passed-on");
        self.dispatch([session]);
        Ok(())
    }

    /// A control client takes over the head form of a session.
    pub fn claim(&self, caller: &Caller, id: u64) -> Result<(String, String, Dict), Error> {
        let (token, request_json, info, previous, session) = {
            let mut state = self.lock();
            let form = state
                .forms
                .get(&id)
                .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
            let session_id = form.record.session.clone();
            if form.record.state == FormState::Answered {
                return Err(Error::WrongState(format!("form {id} was answered already")));
            }
            let session = state
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
            let token = secret();
            let form = state
                .forms
                .get_mut(&id)
                .ok_or_else(|| Error::NotFound(format!("no form {id}")))?;
            let previous = form.presenter.take();
            let claimer = Presenter {
                bus_name: caller.name.clone(),
                token: token.clone(),
                label: format!("control client (pid {})", caller.pid.unwrap_or(0)),
                frontend_path: None,
            };
            let info = present(form, claimer, &origin);
            (token, form.request_json.to_string(), info, previous, session_id)
        };
        if let Some(previous) = previous {
            self.withdraw(&previous, id, "claimed");
        }
        self.form_changed(id, &session, "presented", "claimed");
        Ok((token, request_json, info))
    }
}
