//! The broker's in-memory state: live sessions, forms and front-ends.
//!
//! sled holds the truth across restarts; this holds what only matters while
//! the daemon runs (who presents what, which front-ends are alive) and
//! indexes the rest for the hot path.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use elicit_proto::{Elicitation, Mode};

use crate::store::{FormRecord, FormState, SessionRecord};

/// Everything the broker knows, behind one lock.
#[derive(Debug, Default)]
pub struct State {
    /// Open sessions by id.
    pub sessions: HashMap<String, Session>,
    /// Live forms (queued, presented, or answered and not yet delivered).
    pub forms: BTreeMap<u64, Form>,
    /// Registered front-ends by unique bus name.
    pub frontends: HashMap<String, Frontend>,
    /// Registrations so far, to order front-ends of equal rank.
    pub registrations: u64,
}

/// One open session.
#[derive(Debug)]
pub struct Session {
    /// As stored.
    pub record: SessionRecord,
    /// Unanswered forms in submission order; the head is the only one that
    /// may be presented.
    pub queue: VecDeque<u64>,
    /// Every live form of the session, answered ones included: the
    /// per-session limit and lookups need no scan of all forms.
    pub forms: BTreeSet<u64>,
    /// Being ended: none of its forms may be presented any more.
    pub ending: bool,
}

/// One live form.
#[derive(Debug)]
pub struct Form {
    /// As stored.
    pub record: FormRecord,
    /// The checked request, parsed once.
    pub request: Arc<Elicitation>,
    /// The request as JSON text, as front-ends receive it.
    pub request_json: Arc<str>,
    /// Who shows it now, if anyone.
    pub presenter: Option<Presenter>,
    /// Stored and past the policy: only then may it be presented.
    pub ready: bool,
    /// Names of the front-ends that passed it on (`PassOn`): it is not
    /// presented to them again while the daemon runs.
    pub passed_by: Vec<String>,
    /// Its outcome or its retirement is being written: nobody else may
    /// finish it meanwhile, and the change shows only once the write
    /// succeeded.
    pub finishing: bool,
}

/// Who holds a presented form, and the token its answer must carry.
#[derive(Debug, Clone)]
pub struct Presenter {
    /// The presenter's unique bus name.
    pub bus_name: String,
    /// The per-presentation secret.
    pub token: String,
    /// What history records as the answerer.
    pub label: String,
    /// The `Frontend1` object of a front-end (it gets `Withdraw`); `None`
    /// for a control client that claimed the form.
    pub frontend_path: Option<String>,
}

/// What a front-end can render.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Forms with fields.
    pub form: bool,
    /// URL consent.
    pub url: bool,
    /// Confirmations (forms with no fields).
    pub confirm: bool,
}

impl Capabilities {
    /// Reads the `capabilities` option; none given means everything.
    pub fn from_names(names: Option<Vec<String>>) -> Capabilities {
        let Some(names) = names else {
            return Capabilities {
                form: true,
                url: true,
                confirm: true,
            };
        };
        let has = |name: &str| names.iter().any(|n| n == name);
        Capabilities {
            form: has("form"),
            url: has("url"),
            // A front-end that renders forms renders the empty form too.
            confirm: has("confirm") || has("form"),
        }
    }

    /// Whether a front-end with these capabilities can show `request`.
    pub fn can_show(&self, request: &Elicitation) -> bool {
        match &request.mode {
            Mode::Url { .. } => self.url,
            Mode::Form(form) if form.is_confirmation() => self.confirm,
            Mode::Form(_) => self.form,
        }
    }
}

/// A registered front-end.
#[derive(Debug, Clone)]
pub struct Frontend {
    /// Its unique bus name.
    pub bus_name: String,
    /// The object path it serves `Frontend1` at.
    pub path: String,
    /// Its name (`gtk`, `tui`, …), matched against the preference list.
    pub name: String,
    /// What it can render.
    pub capabilities: Capabilities,
    /// Higher comes first among front-ends the preference list does not rank.
    pub priority: i32,
    /// Registration order, the last tie-breaker (earlier first).
    pub order: u64,
}

impl State {
    /// The best live front-end for `form`, by the preference list, then
    /// priority, then registration order; never one that passed it on.
    pub fn best_frontend(&self, form: &Form, preference: &[String]) -> Option<&Frontend> {
        let rank = |f: &Frontend| preference.iter().position(|p| *p == f.name).unwrap_or(usize::MAX);
        self.frontends
            .values()
            .filter(|f| f.capabilities.can_show(&form.request) && !form.passed_by.contains(&f.name))
            .min_by_key(|f| (rank(f), -i64::from(f.priority), f.order))
    }

    /// The front-end names a program started for `form` would be unwanted
    /// under: those registered already and those that passed it on.
    pub fn unwanted_for(&self, form: &Form) -> HashSet<String> {
        self.frontends
            .values()
            .map(|f| f.name.clone())
            .chain(form.passed_by.iter().cloned())
            .collect()
    }

    /// Forms queued or presented (stored, not still being stored).
    pub fn pending(&self) -> usize {
        self.forms
            .values()
            .filter(|f| f.ready && f.record.state != FormState::Answered)
            .count()
    }

    /// Sessions owned by `bus_name`.
    pub fn sessions_of(&self, bus_name: &str) -> impl Iterator<Item = &Session> {
        self.sessions.values().filter(move |s| s.record.owner == bus_name)
    }
}
