//! Forms that wait with nobody to show them: the driver tells their
//! owners when no front-end program could be started for them, so that
//! the agent's user learns where to answer.

use super::Core;
use crate::store::FormState;

/// A form at the head of its session that no front-end shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    /// The session owner's unique bus name.
    pub owner: String,
    /// The session.
    pub session: String,
    /// The form.
    pub form: u64,
}

impl Core {
    /// The head forms that are stored, unanswered and shown by nobody, in
    /// form order: those a started front-end would have shown.
    pub fn unseen(&self) -> Vec<Unseen> {
        let mut unseen: Vec<Unseen> = self
            .state
            .sessions()
            .filter(|session| !session.ending)
            .filter_map(|session| {
                let head = *session.queue.front()?;
                let form = self.state.form(&head)?;
                let waiting = form.ready
                    && !form.finishing
                    && !form.retiring
                    && form.presenter.is_none()
                    && form.record.state != FormState::Answered;
                waiting.then(|| Unseen {
                    owner: session.record.owner.clone(),
                    session: session.record.id.clone(),
                    form: head,
                })
            })
            .collect();
        unseen.sort_unstable_by_key(|u| u.form);
        unseen
    }
}
