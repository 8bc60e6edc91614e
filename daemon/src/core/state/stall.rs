//! Front-ends that left a `Show` unanswered past `show-timeout-ms` (a
//! terminal stopped with Ctrl-Z, a machine swapping) while their
//! connection stays on the bus: set aside, not forgotten. Their forms go
//! elsewhere; their next reply or call brings them back as they were
//! registered, so that a paused front-end is not lost until the daemon
//! restarts.

use super::{Frontend, Presenter, State};
use crate::store::FormState;

/// A form taken back from a front-end set aside.
#[derive(Debug, Clone)]
pub(crate) struct TakenBack {
    /// Who showed it.
    pub(crate) presenter: Presenter,
    /// Its session.
    pub(crate) session: String,
    /// The form.
    pub(crate) form: u64,
}

impl State {
    /// Sets `bus_name` aside: it is presented nothing and counts as no
    /// front-end until [`State::frontend_back`]. The forms it shows go
    /// back to the head of their queues, and are returned. `None` when it
    /// is no registered front-end (or was set aside already).
    pub(crate) fn frontend_stalled(&mut self, bus_name: &str) -> Option<(Frontend, Vec<TakenBack>)> {
        let frontend = self.frontends.remove(bus_name)?;
        self.stalled.insert(bus_name.to_owned(), frontend.clone());
        let taken = self
            .forms
            .values_mut()
            .filter(|f| f.presenter.as_ref().is_some_and(|p| p.bus_name == bus_name))
            .filter_map(|form| {
                let presenter = form.presenter.take()?;
                form.record.state = FormState::Queued;
                Some(TakenBack {
                    presenter,
                    session: form.record.session.clone(),
                    form: form.record.id,
                })
            })
            .collect();
        Some((frontend, taken))
    }

    /// `bus_name`, set aside, answered or called: it is a front-end again,
    /// ranked as it was registered. Returns it, or `None` when it was not
    /// set aside.
    pub(crate) fn frontend_back(&mut self, bus_name: &str) -> Option<Frontend> {
        let frontend = self.stalled.remove(bus_name)?;
        self.frontends.insert(bus_name.to_owned(), frontend.clone());
        Some(frontend)
    }

    /// Whether `bus_name` is set aside.
    #[cfg(test)]
    pub(crate) fn is_stalled(&self, bus_name: &str) -> bool {
        self.stalled.contains_key(bus_name)
    }
}
