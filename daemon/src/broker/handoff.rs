//! `PassOn`: a front-end that cannot show a form well (a notification with
//! "Open…", or one the user dismissed) hands it to the next-best front-end;
//! `Claim`: a control client takes a form over from whoever shows it.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::Dict;

use super::sessions::secret;
use super::state::Presenter;
use super::{Broker, Caller};

impl Broker {
    /// The presenter of form `id` (checked by its token, like an answer)
    /// gives it up: the form goes back to the head of its session's queue
    /// and on to the best other front-end, or to a started front-end
    /// program, and never back to a front-end of the passer's name while
    /// the daemon runs. With nobody to take it, it waits, queued.
    pub fn pass_on(self: &Arc<Self>, caller: &Caller, id: u64, token: &str) -> Result<(), Error> {
        let (session, passer) = self.lock().pass_on(id, &caller.name, token)?;
        tracing::info!(form = id, %session, frontend = %passer, "form passed on");
        self.form_changed(id, &session, "queued", "passed-on");
        self.dispatch([session]);
        Ok(())
    }

    /// A control client takes over the head form of a session.
    pub fn claim(&self, caller: &Caller, id: u64) -> Result<(String, String, Dict), Error> {
        let token = secret();
        let claimer = Presenter {
            bus_name: caller.name.clone(),
            token: token.clone(),
            label: format!("control client (pid {})", caller.pid.unwrap_or(0)),
            frontend_path: None,
        };
        let (request_json, info, previous, session) = self.lock().claim(id, claimer)?;
        if let Some(previous) = previous {
            self.withdraw(&previous, id, "claimed");
        }
        self.form_changed(id, &session, "presented", "claimed");
        Ok((token, request_json.to_string(), info))
    }
}
