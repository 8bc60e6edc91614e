//! The broker's rules as plain code: no lock, no `async`, no sled, no
//! zbus, no clock, no task.
//!
//! Its shape is quinn-proto's `Connection`: the driver feeds it
//! [`Input`]s with the time ([`Core::handle`]), carries out the
//! [`Effect`]s it returns in order, and wakes it at
//! [`Core::next_timeout`]. Everything the broker knows lives here:
//! sessions, queues, presentations and their tokens, deadlines and
//! grace periods, proof challenges, watchers, front-ends, idleness.
//!
//! Durability: a step that changes what survives a restart emits one
//! [`Effect::Write`] and keeps what it will do once that batch is stored
//! ([`pending::Pending`]). Only [`Input::Stored`] applies it and sends the
//! replies that promise durability; [`Input::Failed`] changes nothing and
//! turns into `Storage` replies.

mod deadlines;
mod forms;
mod frontends;
pub mod io;
pub mod listing;
mod pending;
mod presentation;
mod proofs;
mod restore;
mod retire;
mod sessions;
pub mod state;
mod unseen;

#[cfg(test)]
mod sim;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use elicit_proto::Error;
use rand::{Rng, SeedableRng};

pub use forms::action_name;
pub use io::{
    BatchId, Call, CallId, Caller, Effect, ElicitOptions, FormChangedSignal, FrontendSpec, Input, Object,
    Registration, Remember, RememberTarget, Reply, ResponseSignal, Write,
};
pub use restore::Restored;
pub use unseen::Unseen;

use crate::config::Config;
use state::State;

/// The broker's rules and state.
pub struct Core {
    config: Config,
    /// The daemon's unique bus name, which every proof is bound to.
    own_name: String,
    state: State,
    /// The next id to hand out (sessions, forms, registrations).
    next_id: u64,
    next_batch: BatchId,
    /// What to do once each batch in flight is stored, or failed.
    pending: HashMap<BatchId, pending::Pending>,
    deadlines: deadlines::Deadlines,
    /// Client-gone grace periods: (when, departed owner) → its sessions.
    graces: BTreeMap<(u64, String), Vec<String>>,
    /// Session ends waiting for a retirement of one of their forms:
    /// their calls and reason.
    deferred_ends: BTreeMap<String, (Vec<CallId>, String)>,
    /// Proof challenges handed out, by (caller, session).
    challenges: HashMap<(String, String), Vec<u8>>,
    /// Connections that asked for `FormChanged`.
    watchers: BTreeSet<String>,
    /// Front-end registrations by id, as durable.
    registrations: BTreeMap<String, Registration>,
    /// Secrets and tokens: seeded from the OS in the daemon, from the
    /// seed in the simulation.
    rng: rand::rngs::StdRng,
    idle: deadlines::Idle,
    effects: Vec<Effect>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("own_name", &self.own_name)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl Core {
    /// A core with nothing in it yet (see [`Core::restore`]); `own_name`
    /// is the daemon's unique bus name, `seed` feeds its secrets, `now`
    /// starts the idle clock.
    pub fn new(config: Config, own_name: String, seed: [u8; 32], now: u64) -> Core {
        let idle_period = config.broker.exit_on_idle().map(|d| d.as_millis() as u64);
        Core {
            config,
            own_name,
            state: State::default(),
            next_id: 1,
            next_batch: 1,
            pending: HashMap::new(),
            deadlines: deadlines::Deadlines::default(),
            graces: BTreeMap::new(),
            deferred_ends: BTreeMap::new(),
            challenges: HashMap::new(),
            watchers: BTreeSet::new(),
            registrations: BTreeMap::new(),
            rng: rand::rngs::StdRng::from_seed(seed),
            idle: deadlines::Idle::new(idle_period, now),
            effects: Vec::new(),
        }
    }

    /// Switches the idle exit off (`--no-exit-on-idle`).
    pub fn never_idle(&mut self) {
        self.idle = deadlines::Idle::new(None, 0);
    }

    /// Acts on `input` at `now` (milliseconds since the epoch) and returns
    /// what the driver must do, in order.
    pub fn handle(&mut self, now: u64, input: Input) -> Vec<Effect> {
        match input {
            Input::Call { id, caller, call } => {
                // A front-end set aside that calls runs again (unless it
                // calls to leave).
                if !matches!(call, Call::UnregisterFrontend) {
                    self.frontend_answered(&caller.name);
                }
                self.call(now, id, &caller, call)
            }
            Input::Stored(batch) => self.stored(now, batch),
            Input::Failed { batch, error } => self.failed(now, batch, &error),
            Input::ShowFailed { form, bus_name } => self.show_failed(form, &bus_name),
            Input::ShowUnanswered { form, bus_name } => self.show_unanswered(form, &bus_name),
            Input::FrontendAnswered(bus_name) => self.frontend_answered(&bus_name),
            Input::NameLost(name) => self.name_lost(now, &name),
            Input::Timer => self.timer(now),
            Input::DispatchAll => self.dispatch_all(),
            Input::NameReleased { busy } => self.name_released(now, busy),
        }
        std::mem::take(&mut self.effects)
    }

    /// When the core must next be woken with [`Input::Timer`]: the
    /// earliest deadline, grace period or idle exit.
    pub fn next_timeout(&self) -> Option<u64> {
        let idle = self.idle.due(self.is_idle());
        [
            self.deadlines.earliest(),
            self.graces.keys().next().map(|(at, _)| *at),
            idle,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The live state, for tests and the simulation's checks.
    #[cfg(test)]
    pub(crate) fn state(&self) -> &State {
        &self.state
    }

    fn call(&mut self, now: u64, id: CallId, caller: &Caller, call: Call) {
        let result = match call {
            Call::OpenSession(origin) => self.open_session(now, id, caller, origin),
            Call::ResumeSession(token) => self.resume_session(now, id, caller, &token),
            Call::ProveSession { session, nonce } => self.prove_session(caller, &session, &nonce),
            Call::ResumeProven { session, proof } => self.resume_proven(now, id, caller, &session, &proof),
            Call::Admissible {
                session,
                bytes,
                submission_id,
            } => self.admissible(caller, &session, bytes, submission_id.as_deref()),
            Call::Elicit {
                session,
                request,
                text,
                options,
                verdict,
            } => self.elicit(now, id, caller, &session, request, text, options, verdict),
            Call::Redeliver(session) => self.redeliver(caller, &session),
            Call::CloseSession(session) => self.close_session(now, id, caller, &session),
            Call::Acknowledge(form) => self.acknowledge(now, caller, form),
            Call::CloseForm(form) => self.close_form(now, id, caller, form),
            Call::RegisterFrontend(spec) => self.register_frontend(caller, spec),
            Call::OpenFrontend(spec) => self.open_frontend(now, id, caller, spec),
            Call::ProveFrontend { registration, nonce } => self.prove_frontend(caller, &registration, &nonce),
            Call::ResumeFrontend { spec, registration } => self.resume_frontend(caller, spec, &registration),
            Call::UnregisterFrontend => {
                self.frontend_lost(&caller.name);
                self.drop_registrations(&caller.name);
                Ok(Some(Reply::Done))
            }
            Call::Watch => self.watch(caller),
            Call::ListForms => self.list_forms(now, caller),
            Call::ListFormsPage { after, brief } => self.list_forms_page(now, caller, after, brief),
            Call::Claim(form) => self.claim(caller, form),
            Call::Answer {
                form,
                token,
                action,
                content,
                remember,
            } => self.answer(id, caller, form, &token, &action, &content, remember),
            Call::PassOn { form, token } => self.pass_on(caller, form, &token),
            Call::Counts => {
                let (pending, sessions, frontends) = self.state.counts();
                Ok(Some(Reply::Counts(pending, sessions, frontends)))
            }
        };
        // `Ok(None)`: the reply waits for a batch.
        match result {
            Ok(None) => {}
            Ok(Some(reply)) => self.reply(id, Ok(reply)),
            Err(error) => self.reply(id, Err(error)),
        }
    }

    fn reply(&mut self, call: CallId, result: Result<Reply, Error>) {
        self.effects.push(Effect::Reply { call, result });
    }

    /// A fresh id.
    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A fresh 128-bit secret, as hex.
    fn secret(&mut self) -> String {
        let bytes: [u8; 16] = self.rng.random();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Emits `writes` as one batch; `then` is what its storing does.
    fn write(&mut self, writes: Vec<Write>, then: Option<pending::Pending>) -> BatchId {
        let batch = self.next_batch;
        self.next_batch += 1;
        let lazy = then.is_none();
        if let Some(then) = then {
            self.pending.insert(batch, then);
        }
        self.effects.push(Effect::Write {
            batch,
            writes,
            next_id: self.next_id,
            lazy,
        });
        batch
    }

    /// `FormChanged` to every watcher, if there is any.
    fn form_changed(&mut self, form: u64, session: &str, state: &'static str, reason: &str) {
        if self.watchers.is_empty() {
            return;
        }
        self.effects.push(Effect::FormChanged(FormChangedSignal {
            to: self.watchers.iter().cloned().collect(),
            form,
            session: session.to_owned(),
            state,
            reason: reason.to_owned(),
        }));
    }

    /// `Watch`: `FormChanged` goes to `caller` until it leaves the bus.
    fn watch(&mut self, caller: &Caller) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("watch forms")?;
        self.watchers.insert(caller.name.clone());
        Ok(Some(Reply::Done))
    }

    /// A bus name left the bus: its challenges, watch and registrations
    /// go, its forms go to other front-ends, and the sessions it owned
    /// start their grace period.
    fn name_lost(&mut self, now: u64, name: &str) {
        self.challenges.retain(|(caller, _), _| caller != name);
        self.watchers.remove(name);
        self.drop_registrations(name);
        self.frontend_lost(name);
        self.owner_lost(now, name);
    }

    /// Whether nothing keeps the daemon running: no session (so no form),
    /// and no session being opened or resumed.
    fn is_idle(&self) -> bool {
        self.state.idle() && !self.pending.values().any(pending::Pending::keeps_busy)
    }
}
