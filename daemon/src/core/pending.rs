//! Batches in flight and what their outcome does: a change shows, and a
//! reply that promises durability goes out, only once its batch is
//! stored; a failed batch puts everything back and replies `Storage`.

use elicit_proto::Error;

use super::{CallId, Core, RememberTarget};
use crate::store::{FormRecord, SessionRecord};

/// What a stored batch completes.
#[derive(Debug)]
pub(super) enum Pending {
    /// A new session.
    Open { call: CallId, record: SessionRecord },
    /// A session's new owner.
    TakeOver {
        call: CallId,
        session: String,
        owner: String,
    },
    /// A new form; `calls` are the submission and its retries (same
    /// submission id) made while it was being stored.
    Elicit {
        calls: Vec<CallId>,
        id: u64,
        answered: bool,
    },
    /// A form's outcome.
    Finish(Finish),
    /// Forms retired without delivery, and the end of their session.
    Retire(Retire),
    /// A new front-end registration.
    OpenFrontend {
        call: CallId,
        id: String,
        registration: super::Registration,
        spec: super::FrontendSpec,
        caller: String,
    },
    /// What start-up changed.
    Startup,
}

/// A form's outcome being stored.
#[derive(Debug)]
pub(super) struct Finish {
    /// The answering call; `None` for an expiry.
    pub call: Option<CallId>,
    /// The record with its outcome.
    pub record: FormRecord,
    /// The answerer's bus name (it is not told to withdraw).
    pub answerer: Option<String>,
    /// Where to remember the answer, when asked to.
    pub remember: Option<RememberTarget>,
}

/// Forms being retired to history.
#[derive(Debug)]
pub(super) struct Retire {
    /// The calls that asked (none for a grace period's end).
    pub calls: Vec<CallId>,
    /// The forms and their sessions.
    pub forms: Vec<(u64, String)>,
    /// Why.
    pub reason: String,
    /// The session that ends with them.
    pub ending: Option<String>,
}

impl Pending {
    /// Whether it keeps the daemon from exiting idle.
    pub(super) fn keeps_busy(&self) -> bool {
        matches!(self, Pending::Open { .. } | Pending::TakeOver { .. })
    }
}

impl Core {
    pub(super) fn stored(&mut self, now: u64, batch: u64) {
        let Some(pending) = self.pending.remove(&batch) else {
            return;
        };
        match pending {
            Pending::Open { call, record } => self.session_opened(now, call, record),
            Pending::TakeOver { call, session, owner } => self.taken_over(now, call, &session, &owner),
            Pending::Elicit { calls, id, answered } => self.form_stored(calls, id, answered),
            Pending::Finish(finish) => self.finish_stored(finish),
            Pending::Retire(retire) => self.retire_stored(now, retire),
            Pending::OpenFrontend {
                call,
                id,
                registration,
                spec,
                caller,
            } => self.frontend_opened(call, id, registration, spec, &caller),
            Pending::Startup => {}
        }
    }

    pub(super) fn failed(&mut self, now: u64, batch: u64, error: &str) {
        let Some(pending) = self.pending.remove(&batch) else {
            return;
        };
        let storage = || Error::Storage(error.to_owned());
        match pending {
            Pending::Open { call, .. } | Pending::TakeOver { call, .. } => {
                self.idle.touch(now);
                self.reply(call, Err(storage()));
            }
            Pending::OpenFrontend { call, .. } => self.reply(call, Err(storage())),
            Pending::Elicit { calls, id, .. } => {
                self.form_not_stored(id);
                for call in calls {
                    self.reply(call, Err(storage()));
                }
            }
            Pending::Finish(finish) => self.finish_failed(now, finish, storage()),
            Pending::Retire(retire) => self.retire_failed(now, retire, error),
            Pending::Startup => {
                tracing::error!(%error, "what start-up changed could not be stored; it is done again at the next start");
            }
        }
    }

    /// The calls waiting for the end of `session` being stored, if it is.
    pub(super) fn pending_end(&mut self, session: &str) -> Option<&mut Vec<CallId>> {
        self.pending.values_mut().find_map(|p| match p {
            Pending::Retire(retire) if retire.ending.as_deref() == Some(session) => Some(&mut retire.calls),
            _ => None,
        })
    }

    /// The pending new form `id`, if it is still being stored.
    pub(super) fn pending_elicit(&mut self, id: u64) -> Option<&mut Vec<CallId>> {
        self.pending.values_mut().find_map(|p| match p {
            Pending::Elicit {
                calls, id: pending, ..
            } if *pending == id => Some(calls),
            _ => None,
        })
    }
}
