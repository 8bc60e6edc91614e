//! Deterministic simulation, after FoundationDB's simulator and
//! TigerBeetle's VOPR: one seed drives the core, a fake storage (delays,
//! failed batches, a disk that fills and drains, crashes that drop what
//! was not reported durable and restart the core from what was), a fake
//! clock, random clients and random front-ends. After every step the
//! invariants of issue 27 are checked; a failure names its seed, and
//! `ELICITD_SIM_SEED=N` replays that seed alone.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::testkit::{self, caller, elicit, form_of, frontend};
use super::{Call, Core, Effect, Input, Registration, Reply, Restored, Write};
use crate::store::{FormRecord, FormState, HistoryRecord, SessionRecord};

mod check;
use check::describe;
mod step;

/// Seeds run by `cargo test`.
const SEEDS: u64 = 10_000;

/// Steps per seed.
const STEPS: usize = 150;

/// What survives a crash: what the storage reported durable.
#[derive(Debug, Default, Clone)]
struct Disk {
    sessions: BTreeMap<String, SessionRecord>,
    forms: BTreeMap<u64, FormRecord>,
    history: Vec<HistoryRecord>,
    registrations: BTreeMap<String, Registration>,
    next_id: u64,
}

impl Disk {
    fn apply(&mut self, writes: &[Write], next_id: u64) {
        self.next_id = self.next_id.max(next_id);
        for write in writes {
            match write {
                Write::PutSession(s) => {
                    self.sessions.insert(s.id.clone(), s.clone());
                }
                Write::RemoveSession(id) => {
                    self.sessions.remove(id);
                }
                Write::PutForm(f) => {
                    self.forms.insert(f.id, f.clone());
                }
                Write::RemoveForm(id) => {
                    self.forms.remove(id);
                }
                Write::EraseAnswer(_) => {}
                Write::History(h) => self.history.push(h.clone()),
                Write::PutRegistration(id, r) => {
                    self.registrations.insert(id.clone(), r.clone());
                }
                Write::RemoveRegistration(id) => {
                    self.registrations.remove(id);
                }
            }
        }
    }

    fn restored(&self) -> Restored {
        Restored {
            sessions: self.sessions.values().cloned().collect(),
            forms: self.forms.values().map(|f| (f.clone(), false)).collect(),
            answer_files: Vec::new(),
            registrations: self.registrations.clone().into_iter().collect(),
            next_id: self.next_id,
        }
    }
}

/// A batch handed to the fake storage, not yet reported.
struct Queued {
    batch: u64,
    writes: Vec<Write>,
    next_id: u64,
    lazy: bool,
}

/// What a call in flight was, to read its reply.
#[derive(Debug, Clone)]
enum Asked {
    Open { client: String },
    Resume { client: String, session: String },
    Elicit { session: String },
    Answer { frontend: String, form: u64 },
    Other,
}

#[derive(Debug, Default)]
struct Client {
    alive: bool,
    /// Sessions it owns, with their resume tokens.
    sessions: Vec<String>,
    /// Forms it was told the outcome of.
    answered: Vec<u64>,
    /// Submission ids it used, for retries.
    sids: Vec<(String, String)>,
}

#[derive(Debug, Default)]
struct Frontend {
    alive: bool,
    registered: bool,
    /// Paused past a `Show`'s time: the core sets it aside until it
    /// answers or calls.
    stalled: bool,
    /// Forms it shows, with their tokens.
    shown: BTreeMap<u64, String>,
}

/// One simulated world.
struct World {
    seed: u64,
    rng: StdRng,
    core: Core,
    now: u64,
    disk: Disk,
    queue: VecDeque<Queued>,
    /// The disk is full: every batch fails until it drains.
    full: bool,
    next_call: u64,
    asked: HashMap<u64, Asked>,
    clients: BTreeMap<String, Client>,
    frontends: BTreeMap<String, Frontend>,
    next_name: u64,
    /// Session → (its owner as the clients know it, its resume token).
    owners: HashMap<String, (String, String)>,
    /// Forms whose submission was acknowledged (Elicit replied a path).
    acknowledged: BTreeMap<u64, String>,
    /// Forms that got a `Response` since the last restart.
    responded: HashSet<u64>,
    /// Forms whose outcome a client acknowledged (durable or not).
    delivered: HashSet<u64>,
    steps: usize,
    log: Vec<String>,
}

impl World {
    fn new(seed: u64) -> World {
        let mut rng = StdRng::seed_from_u64(seed);
        let core = Core::new(testkit::config(), ":1.0".into(), rng.random(), 0);
        World {
            seed,
            rng,
            core,
            now: 0,
            disk: Disk::default(),
            queue: VecDeque::new(),
            full: false,
            next_call: 1,
            asked: HashMap::new(),
            clients: BTreeMap::new(),
            frontends: BTreeMap::new(),
            next_name: 1,
            owners: HashMap::new(),
            acknowledged: BTreeMap::new(),
            responded: HashSet::new(),
            delivered: HashSet::new(),
            steps: 0,
            log: Vec::new(),
        }
    }

    fn fail(&self, what: &str) -> ! {
        let tail: Vec<&String> = self.log.iter().rev().take(40).collect();
        panic!(
            "simulation seed {} failed at step {}: {what}\n(replay: ELICITD_SIM_SEED={} cargo test -p elicitd sim)\nlast steps, newest first: {tail:#?}",
            self.seed, self.steps, self.seed
        )
    }

    fn name(&mut self) -> String {
        self.next_name += 1;
        format!(":1.{}", self.next_name)
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.rng.random_range(0..items.len())].clone())
    }

    /// A live client, then one of the items `of` lists for it: the
    /// random draws of two `pick`s, in that order.
    fn pick_of_a_live_client<T: Clone>(&mut self, of: impl Fn(&Client) -> &Vec<T>) -> Option<(String, T)> {
        let client = self.pick(&self.live_clients())?;
        let items = of(&self.clients[&client]).clone();
        Some((client, self.pick(&items)?))
    }

    fn live_clients(&self) -> Vec<String> {
        self.clients
            .iter()
            .filter(|(_, c)| c.alive)
            .map(|(n, _)| n.clone())
            .collect()
    }

    fn live_frontends(&self) -> Vec<String> {
        self.frontends
            .iter()
            .filter(|(_, f)| f.alive && f.registered)
            .map(|(n, _)| n.clone())
            .collect()
    }

    fn input(&mut self, input: Input) {
        let failed_batch = matches!(input, Input::Failed { .. });
        let before = failed_batch.then(|| self.visible());
        let effects = self.core.handle(self.now, input);
        if let Some(before) = before {
            if effects
                .iter()
                .any(|e| matches!(e, Effect::Reply { result: Ok(_), .. }))
            {
                self.fail("a failed batch gave a successful reply");
            }
            if self.visible() != before {
                self.fail("a failed batch changed what is visible");
            }
        }
        self.perform(effects);
    }

    /// What clients and `elicit list` can see: sessions, and stored forms
    /// with whether they are answered.
    fn visible(&self) -> (Vec<String>, Vec<(u64, bool)>) {
        let state = self.core.state();
        let mut sessions: Vec<String> = state.sessions().map(|s| s.record.id.clone()).collect();
        sessions.sort();
        let forms = state
            .forms()
            .filter(|f| f.ready)
            .map(|f| (f.record.id, f.record.state == FormState::Answered))
            .collect();
        (sessions, forms)
    }

    fn call(&mut self, who: &str, call: Call, asked: Asked) {
        let id = self.next_call;
        self.next_call += 1;
        self.asked.insert(id, asked);
        self.input(Input::Call {
            id,
            caller: caller(who),
            call,
        });
    }

    fn perform(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Write {
                    batch,
                    writes,
                    next_id,
                    lazy,
                } => self.queue.push_back(Queued {
                    batch,
                    writes,
                    next_id,
                    lazy,
                }),
                Effect::Reply { call, result } => self.replied(call, result),
                Effect::Show(show) => {
                    if let Some(f) = self.frontends.get_mut(&show.presenter.bus_name)
                        && f.alive
                    {
                        f.shown.insert(show.form, show.presenter.token.clone());
                    }
                }
                Effect::Withdraw { bus_name, form, .. } => {
                    if let Some(f) = self.frontends.get_mut(&bus_name) {
                        f.shown.remove(&form);
                    }
                }
                Effect::Recall { bus_name, form, .. } => match self.frontends.get_mut(&bus_name) {
                    Some(f) if f.stalled => {
                        f.shown.remove(&form);
                    }
                    _ => self.fail(&format!(
                        "form {form} recalled from {bus_name}, which missed no Show"
                    )),
                },
                Effect::Response(crate::core::ResponseSignal {
                    owner, session, form, ..
                }) => {
                    let expected = self.owners.get(&session).map(|(o, _)| o.clone());
                    if expected.as_deref() != Some(owner.as_str()) {
                        self.fail(&format!(
                            "Response for form {form} went to {owner}, not to the owner {expected:?}"
                        ));
                    }
                    if !self.responded.insert(form) {
                        self.fail(&format!("a second Response for form {form}"));
                    }
                    if let Some(client) = self.clients.get_mut(&owner)
                        && client.alive
                    {
                        client.answered.push(form);
                    }
                }
                Effect::ReleaseName => self.input(Input::NameReleased { busy: false }),
                Effect::Exit => self.restart(false),
                Effect::FormChanged(_)
                | Effect::Launch(_)
                | Effect::Registered(_)
                | Effect::AwaitReturning(_)
                | Effect::Export(_)
                | Effect::Unexport(_)
                | Effect::RequestName => {}
            }
        }
    }

    fn replied(&mut self, call: u64, result: Result<Reply, elicit_proto::Error>) {
        let Some(asked) = self.asked.remove(&call) else {
            self.fail(&format!(
                "a reply to call {call}, which nobody made or was replied to"
            ));
        };
        match (asked, result) {
            (Asked::Open { client }, Ok(Reply::Session { path, token })) => {
                let session = path.rsplit('/').next().unwrap_or_default().to_owned();
                self.owners.insert(session.clone(), (client.clone(), token));
                if let Some(c) = self.clients.get_mut(&client) {
                    c.sessions.push(session);
                }
            }
            (Asked::Resume { client, session }, Ok(Reply::Path(_))) => {
                if let Some((owner, _)) = self.owners.get_mut(&session) {
                    *owner = client.clone();
                }
                if let Some(c) = self.clients.get_mut(&client) {
                    c.sessions.push(session);
                }
            }
            (Asked::Elicit { session, .. }, Ok(Reply::Path(path))) => {
                if let Some(form) = form_of(&path) {
                    self.acknowledged.insert(form, session);
                }
            }
            (Asked::Answer { frontend, form }, Ok(_)) => {
                if let Some(f) = self.frontends.get_mut(&frontend) {
                    f.shown.remove(&form);
                }
            }
            _ => {}
        }
    }

    /// Restarts the core from the disk: after a crash, what was not
    /// reported durable is gone.
    fn restart(&mut self, crash: bool) {
        if crash {
            self.queue.clear();
        } else {
            // An orderly stop flushes first.
            while let Some(queued) = self.queue.pop_front() {
                self.disk.apply(&queued.writes, queued.next_id);
            }
        }
        self.asked.clear();
        self.responded.clear();
        let seed: [u8; 32] = self.rng.random();
        self.core = Core::new(testkit::config(), ":1.0".into(), seed, self.now);
        let on_bus: HashSet<String> = self
            .clients
            .iter()
            .filter(|(_, c)| c.alive)
            .map(|(n, _)| n.clone())
            .chain(
                self.frontends
                    .iter()
                    .filter(|(_, f)| f.alive)
                    .map(|(n, _)| n.clone()),
            )
            .collect();
        for f in self.frontends.values_mut() {
            f.registered = false;
            f.stalled = false;
            f.shown.clear();
        }
        let (_, effects) = self.core.restore(self.now, self.disk.restored(), &on_bus);
        self.log.push(format!("restart (crash: {crash})"));
        self.perform(effects);
    }

    /// Completes, fails or keeps the oldest batch.
    fn storage(&mut self) {
        let Some(queued) = self.queue.pop_front() else {
            return;
        };
        if self.full || self.rng.random_bool(0.05) {
            self.log.push(format!(
                "batch {} failed: {}",
                queued.batch,
                describe(&queued.writes)
            ));
            if !queued.lazy {
                self.input(Input::Failed {
                    batch: queued.batch,
                    error: "No space left on device".into(),
                });
            }
            return;
        }
        self.disk.apply(&queued.writes, queued.next_id);
        self.log.push(format!(
            "batch {} stored: {}",
            queued.batch,
            describe(&queued.writes)
        ));
        if !queued.lazy {
            self.input(Input::Stored(queued.batch));
        }
    }

    /// Moves the clock, waking the core at every timeout it named.
    fn tick(&mut self) {
        let until = self.now + self.rng.random_range(1..2_000);
        while let Some(at) = self.core.next_timeout().filter(|at| *at <= until) {
            self.now = self.now.max(at);
            self.input(Input::Timer);
            if self.core.next_timeout().is_some_and(|next| next <= self.now) {
                self.fail("the timer fired and something due is still waiting");
            }
        }
        self.now = until;
    }
}

fn run(seed: u64) {
    let mut world = World::new(seed);
    for _ in 0..STEPS {
        world.step();
        world.check();
    }
    // Drain: every batch stored, every timer fired; then a crash.
    world.full = false;
    while !world.queue.is_empty() {
        world.storage();
        world.check();
    }
    world.restart(true);
    world.check();
}

#[test]
fn simulated_seeds_keep_every_invariant() {
    if let Some(seed) = std::env::var("ELICITD_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        run(seed);
        return;
    }
    let started = std::time::Instant::now();
    for seed in 0..SEEDS {
        run(seed);
    }
    eprintln!("{SEEDS} seeds of {STEPS} steps in {:?}", started.elapsed());
}
