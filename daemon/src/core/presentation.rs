//! Presenting each session's head form to the best front-end,
//! withdrawing it, passing it on and claiming it.

use elicit_proto::Error;

use super::state::{Presentations, Presenter};
use super::{Caller, Core, Effect, Reply};

impl Core {
    /// Presents the head form of every session.
    pub(super) fn dispatch_all(&mut self) {
        let sessions = self.state.sessions_by_head();
        self.dispatch(sessions);
    }

    /// Presents the head form of each of `sessions` that has none shown;
    /// a form nobody can show starts a front-end program.
    pub(super) fn dispatch(&mut self, sessions: impl IntoIterator<Item = String>) {
        let preference = self.config.frontends.preference.clone();
        let Presentations { shows, unserved } = {
            let rng = &mut self.rng;
            self.state.present_heads(sessions, &preference, || {
                let bytes: [u8; 16] = rand::Rng::random(rng);
                let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                token
            })
        };
        for unwanted in unserved {
            self.effects.push(Effect::Launch(unwanted));
        }
        for show in shows {
            self.form_changed(show.form, &show.session, "presented", &show.presenter.label);
            self.effects.push(Effect::Show(show));
        }
    }

    /// Tells a presenter to stop showing a form; control clients are not
    /// told (they learn from `FormChanged`).
    pub(super) fn withdraw(&mut self, presenter: &Presenter, session: &str, form: u64, reason: &str) {
        let Some(path) = presenter.frontend_path.clone() else {
            return;
        };
        self.effects.push(Effect::Withdraw {
            bus_name: presenter.bus_name.clone(),
            path,
            session: session.to_owned(),
            form,
            reason: reason.to_owned(),
        });
    }

    /// A front-end failed to show a form: it counts as gone.
    pub(super) fn show_failed(&mut self, form: u64, bus_name: &str) {
        tracing::warn!(form, frontend = %bus_name, "front-end failed to show a form; dropping it");
        self.frontend_lost(bus_name);
    }

    /// `PassOn`: the presenter gives the form up; it goes to the best
    /// other front-end, or to a started program, never back to one of the
    /// passer's name while the daemon runs.
    pub(super) fn pass_on(&mut self, caller: &Caller, id: u64, token: &str) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("pass forms on")?;
        let (session, passer) = self.state.pass_on(id, &caller.name, token)?;
        tracing::info!(form = id, %session, frontend = %passer, "form passed on");
        self.form_changed(id, &session, "queued", "passed-on");
        self.dispatch([session]);
        Ok(Some(Reply::Done))
    }

    /// `Claim`: a control client takes over the head form of a session.
    pub(super) fn claim(&mut self, caller: &Caller, id: u64) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("claim forms")?;
        let token = self.secret();
        let claimer = Presenter {
            bus_name: caller.name.clone(),
            token: token.clone(),
            label: format!("control client (pid {})", caller.pid.unwrap_or(0)),
            frontend_path: None,
        };
        let (request, info, previous, session) = self.state.claim(id, claimer)?;
        if let Some(previous) = previous {
            self.withdraw(&previous, &session, id, "claimed");
        }
        self.form_changed(id, &session, "presented", "claimed");
        Ok(Some(Reply::Claimed { token, request, info }))
    }
}
