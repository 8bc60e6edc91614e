//! `PassOn`: a front-end that cannot show a form well (a notification with
//! "Open…", or one the user dismissed) hands it to the next-best front-end.

use std::sync::Arc;

use elicit_proto::Error;

use super::{Broker, Caller};
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
}
