//! The core's picture of the broker: live sessions, forms and front-ends.
//!
//! The store holds the truth across restarts; this holds what only matters
//! while the daemon runs (who presents what, which front-ends are alive)
//! and indexes the rest for the hot path.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use elicit_proto::{Elicitation, Mode};

use crate::store::{FormRecord, FormState, SessionRecord};

mod queue;
mod stall;
pub(crate) use queue::FormLimits;
pub use queue::{Presentations, Show, ShowInfo};

/// Everything the core knows about sessions, forms and front-ends.
#[derive(Debug, Default)]
pub struct State {
    /// Open sessions by id.
    sessions: HashMap<String, Session>,
    /// Live forms (queued, presented, or answered and not yet delivered),
    /// boxed: a B-tree node holds eleven values and is often half empty,
    /// and a form inline is some 400 bytes.
    forms: BTreeMap<u64, Box<Form>>,
    /// Bytes of request text of the live forms (`broker.forms-total-bytes`).
    form_bytes: usize,
    /// Registered front-ends by unique bus name.
    frontends: HashMap<String, Frontend>,
    /// Registered front-ends set aside: they left a `Show` unanswered
    /// past its time but are still on the bus (see `stall.rs`).
    stalled: HashMap<String, Frontend>,
    /// Registrations so far, to order front-ends of equal rank.
    registrations: u64,
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
    /// The checked request, parsed once, without its JSON tree
    /// ([`Elicitation::without_raw`]): `record.request` holds the text,
    /// which is what front-ends receive.
    pub request: Arc<Elicitation>,
    /// Who shows it now, if anyone.
    pub presenter: Option<Presenter>,
    /// Stored and past the policy: only then may it be presented.
    pub ready: bool,
    /// Names of the front-ends that passed it on (`PassOn`): it is not
    /// presented to them again while the daemon runs.
    pub passed_by: Vec<String>,
    /// Its outcome is being written: nobody else may finish it
    /// meanwhile, and the change shows only once the write succeeded.
    pub finishing: bool,
    /// Its retirement (to history) is being written: it is retired once,
    /// whoever else tries meanwhile.
    pub retiring: bool,
}

/// A form as the state holds it: `request` parsed, without its JSON tree
/// (the record holds the text); not yet stored.
pub(crate) fn live_form(record: FormRecord, request: Arc<Elicitation>) -> Form {
    Form {
        record,
        request,
        presenter: None,
        ready: false,
        passed_by: Vec::new(),
        finishing: false,
        retiring: false,
    }
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
    /// Live form `id`.
    pub fn form(&self, id: &u64) -> Option<&Form> {
        self.forms.get(id).map(|form| &**form)
    }

    /// Every live form, in id (submission) order.
    pub fn forms(&self) -> impl Iterator<Item = &Form> {
        self.forms.values().map(|form| &**form)
    }

    /// Live forms with ids above `after` (all with `None`), in id order.
    pub fn forms_after(&self, after: Option<u64>) -> impl Iterator<Item = &Form> {
        let from = match after {
            None => std::ops::Bound::Unbounded,
            Some(id) => std::ops::Bound::Excluded(id),
        };
        self.forms
            .range((from, std::ops::Bound::Unbounded))
            .map(|(_, form)| &**form)
    }

    /// Open session `id`.
    pub fn session(&self, id: &str) -> Option<&Session> {
        self.sessions.get(id)
    }

    /// Every open session.
    pub fn sessions(&self) -> impl Iterator<Item = &Session> {
        self.sessions.values()
    }

    /// Pending forms, sessions and front-ends, for `elicit status`.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.pending(), self.sessions.len(), self.frontends.len())
    }

    /// Whether nothing keeps the daemon running: no open session, and so
    /// no live form (every form belongs to a session).
    pub fn idle(&self) -> bool {
        self.sessions.is_empty() && self.forms.is_empty()
    }

    /// Session ids, the one whose head form waits longest first (sessions
    /// with an empty queue last), so that a front-end arriving late is
    /// shown forms in the order they were asked.
    pub fn sessions_by_head(&self) -> Vec<String> {
        let mut heads: Vec<(u64, &String)> = self
            .sessions
            .iter()
            .map(|(id, session)| (session.queue.front().copied().unwrap_or(u64::MAX), id))
            .collect();
        heads.sort_unstable();
        heads.into_iter().map(|(_, id)| id.clone()).collect()
    }

    /// Adds (or replaces) an open session, with no forms yet.
    pub fn open_session(&mut self, record: SessionRecord) {
        self.sessions.insert(
            record.id.clone(),
            Session {
                record,
                queue: VecDeque::new(),
                forms: Default::default(),
                ending: false,
            },
        );
    }

    /// Makes `owner` the owner of session `id` (once that is stored).
    pub fn set_owner(&mut self, id: &str, owner: &str) {
        if let Some(session) = self.sessions.get_mut(id) {
            session.record.owner = owner.to_owned();
        }
    }

    /// Marks session `id` as ending, so that none of its forms is
    /// presented any more, and returns its forms.
    pub fn begin_ending(&mut self, id: &str) -> Vec<u64> {
        match self.sessions.get_mut(id) {
            Some(session) => {
                session.ending = true;
                session.forms.iter().copied().collect()
            }
            None => Vec::new(),
        }
    }

    /// Session `id` did not end after all (its end could not be stored).
    pub fn cancel_ending(&mut self, id: &str) {
        if let Some(session) = self.sessions.get_mut(id) {
            session.ending = false;
        }
    }

    /// Forgets session `id`, once its end is stored.
    pub fn close_session(&mut self, id: &str) {
        self.sessions.remove(id);
    }

    /// Registers a front-end; it ranks after those registered before it.
    pub fn add_frontend(&mut self, mut frontend: Frontend) -> Frontend {
        self.stalled.remove(&frontend.bus_name);
        self.registrations += 1;
        frontend.order = self.registrations;
        self.frontends.insert(frontend.bus_name.clone(), frontend.clone());
        frontend
    }

    /// Form `id` is stored: it may be presented now.
    pub fn mark_ready(&mut self, id: u64) {
        if let Some(form) = self.forms.get_mut(&id) {
            form.ready = true;
        }
    }

    /// Starts giving form `id` an outcome: returns its record as it is,
    /// unless it has one or another is being stored.
    pub fn begin_finish(&mut self, id: u64) -> Option<FormRecord> {
        let form = self.forms.get_mut(&id)?;
        if form.record.state == FormState::Answered || form.finishing || form.retiring {
            return None;
        }
        form.finishing = true;
        Some(form.record.clone())
    }

    /// Starts retiring form `id` (whatever its state): returns its record
    /// and request, unless its retirement is being written already.
    pub fn begin_retire(&mut self, id: u64) -> Option<(FormRecord, Arc<Elicitation>)> {
        let form = self.forms.get_mut(&id)?;
        if form.retiring {
            return None;
        }
        form.retiring = true;
        Some((form.record.clone(), form.request.clone()))
    }

    /// The retirement begun on form `id` could not be stored: it stays.
    pub fn abandon_retire(&mut self, id: u64) {
        if let Some(form) = self.forms.get_mut(&id) {
            form.retiring = false;
        }
    }

    /// Starts retiring form `id` as delivered: it must be stored and have
    /// an outcome that nobody else is retiring.
    pub fn begin_acknowledge(
        &mut self,
        id: u64,
    ) -> Result<(FormRecord, Arc<Elicitation>), elicit_proto::Error> {
        match self.forms.get_mut(&id) {
            Some(form)
                if form.record.state == FormState::Answered
                    && !form.finishing
                    && !form.retiring
                    && form.ready =>
            {
                form.retiring = true;
                Ok((form.record.clone(), form.request.clone()))
            }
            Some(_) => Err(elicit_proto::Error::WrongState(format!(
                "form {id} has no outcome yet"
            ))),
            None => Err(elicit_proto::Error::NotFound(format!("no form {id}"))),
        }
    }

    /// The change begun on form `id` could not be stored: it stays as it
    /// was.
    pub fn abandon_change(&mut self, id: u64) {
        if let Some(form) = self.forms.get_mut(&id) {
            form.finishing = false;
        }
    }

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
    /// under: those registered already (set aside too: another copy of a
    /// stopped program would not show it either) and those that passed it
    /// on.
    pub fn unwanted_for(&self, form: &Form) -> HashSet<String> {
        self.frontends
            .values()
            .chain(self.stalled.values())
            .map(|f| f.name.clone())
            .chain(form.passed_by.iter().cloned())
            .collect()
    }

    /// Forms queued or presented (stored, not still being stored).
    pub fn pending(&self) -> usize {
        self.forms()
            .filter(|f| f.ready && f.record.state != FormState::Answered)
            .count()
    }

    /// Sessions owned by `bus_name`.
    pub fn sessions_of(&self, bus_name: &str) -> impl Iterator<Item = &Session> {
        self.sessions().filter(move |s| s.record.owner == bus_name)
    }
}
