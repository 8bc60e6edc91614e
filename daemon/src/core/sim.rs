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
                Effect::Response(super::ResponseSignal {
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

    fn step(&mut self) {
        self.steps += 1;
        let roll = self.rng.random_range(0..100);
        match roll {
            0..=5 => {
                let name = self.name();
                self.clients.insert(
                    name.clone(),
                    Client {
                        alive: true,
                        ..Client::default()
                    },
                );
                self.log.push(format!("{name} opens a session"));
                self.call(
                    &name,
                    Call::OpenSession(Default::default()),
                    Asked::Open { client: name.clone() },
                );
            }
            6..=8 => {
                if let Some(client) = self.pick(&self.live_clients()) {
                    self.log.push(format!("{client} opens another session"));
                    self.call(
                        &client,
                        Call::OpenSession(Default::default()),
                        Asked::Open {
                            client: client.clone(),
                        },
                    );
                }
            }
            9..=24 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                let sessions = self.clients[&client].sessions.clone();
                let Some(session) = self.pick(&sessions) else {
                    return;
                };
                let sid = format!("sid{}", self.rng.random_range(0..1_000_000));
                let timeout = self.rng.random_bool(0.3).then(|| self.rng.random_range(1..10));
                if let Some(c) = self.clients.get_mut(&client) {
                    c.sids.push((session.clone(), sid.clone()));
                }
                self.log.push(format!("{client} submits to {session}"));
                let asked = Asked::Elicit {
                    session: session.clone(),
                };
                self.call(&client, elicit(&session, Some(&sid), timeout), asked);
            }
            25..=27 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                let sids = self.clients[&client].sids.clone();
                let Some((session, sid)) = self.pick(&sids) else {
                    return;
                };
                self.log.push(format!("{client} resubmits {sid}"));
                let asked = Asked::Elicit {
                    session: session.clone(),
                };
                self.call(&client, elicit(&session, Some(&sid), None), asked);
            }
            28..=33 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                let answered = self.clients[&client].answered.clone();
                let Some(form) = self.pick(&answered) else { return };
                self.delivered.insert(form);
                self.log.push(format!("{client} acknowledges {form}"));
                self.call(&client, Call::Acknowledge(form), Asked::Other);
            }
            34..=35 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                let forms: Vec<u64> = self
                    .acknowledged
                    .iter()
                    .filter(|(_, s)| self.clients[&client].sessions.contains(s))
                    .map(|(f, _)| *f)
                    .collect();
                let Some(form) = self.pick(&forms) else { return };
                self.log.push(format!("{client} closes form {form}"));
                self.call(&client, Call::CloseForm(form), Asked::Other);
            }
            36..=37 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                let sessions = self.clients[&client].sessions.clone();
                let Some(session) = self.pick(&sessions) else {
                    return;
                };
                self.log.push(format!("{client} closes session {session}"));
                self.call(&client, Call::CloseSession(session), Asked::Other);
            }
            38..=40 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                if let Some(c) = self.clients.get_mut(&client) {
                    c.alive = false;
                }
                self.log.push(format!("{client} vanishes"));
                self.input(Input::NameLost(client));
            }
            41..=42 => {
                // A new connection re-attaches to a session of a vanished
                // client.
                let orphans: Vec<(String, String)> = self
                    .owners
                    .iter()
                    .filter(|(_, (owner, _))| self.clients.get(owner).is_some_and(|c| !c.alive))
                    .map(|(s, (_, token))| (s.clone(), token.clone()))
                    .collect();
                let Some((session, token)) = self.pick(&orphans) else {
                    return;
                };
                let name = self.name();
                self.clients.insert(
                    name.clone(),
                    Client {
                        alive: true,
                        ..Client::default()
                    },
                );
                self.log.push(format!("{name} resumes {session}"));
                let asked = Asked::Resume {
                    client: name.clone(),
                    session,
                };
                self.call(&name, Call::ResumeSession(token), asked);
            }
            43..=46 => {
                let name = self.name();
                self.frontends.insert(
                    name.clone(),
                    Frontend {
                        alive: true,
                        registered: true,
                        ..Frontend::default()
                    },
                );
                self.log.push(format!("front-end {name} registers"));
                self.call(&name, Call::RegisterFrontend(frontend("gtk")), Asked::Other);
            }
            47..=48 => {
                let gone: Vec<String> = self
                    .frontends
                    .iter()
                    .filter(|(_, f)| f.alive && !f.registered)
                    .map(|(n, _)| n.clone())
                    .collect();
                let Some(name) = self.pick(&gone) else { return };
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.registered = true;
                }
                self.log.push(format!("front-end {name} registers again"));
                self.call(&name, Call::RegisterFrontend(frontend("gtk")), Asked::Other);
            }
            49..=60 => {
                let Some(name) = self.pick(&self.live_frontends()) else {
                    return;
                };
                let shown: Vec<(u64, String)> = self.frontends[&name].shown.clone().into_iter().collect();
                let Some((form, token)) = self.pick(&shown) else {
                    return;
                };
                let (token, content) = match self.rng.random_range(0..10) {
                    0 => ("wrong".to_owned(), r#"{"name": "Ada"}"#),
                    1 => (token, r#"{"name": 7}"#),
                    _ => (token, r#"{"name": "Ada"}"#),
                };
                self.log.push(format!("front-end {name} answers {form}"));
                let call = Call::Answer {
                    form,
                    token,
                    action: "accept".into(),
                    content: content.into(),
                    remember: super::Remember::No,
                };
                self.call(
                    &name,
                    call,
                    Asked::Answer {
                        frontend: name.clone(),
                        form,
                    },
                );
            }
            61..=62 => {
                let Some(name) = self.pick(&self.live_frontends()) else {
                    return;
                };
                let shown: Vec<u64> = self.frontends[&name].shown.keys().copied().collect();
                let Some(form) = self.pick(&shown) else { return };
                // Its Show failed: the core counts it as gone; it may
                // register again later.
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.registered = false;
                    f.shown.clear();
                }
                self.log.push(format!("front-end {name} fails to show {form}"));
                self.input(Input::ShowFailed { form, bus_name: name });
            }
            63..=64 => {
                let Some(name) = self.pick(&self.live_frontends()) else {
                    return;
                };
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.alive = false;
                    f.shown.clear();
                }
                self.log.push(format!("front-end {name} vanishes"));
                self.input(Input::NameLost(name));
            }
            65..=84 => self.storage(),
            85..=86 => {
                self.full = !self.full;
                self.log.push(format!(
                    "the disk is {}",
                    if self.full { "full" } else { "drained" }
                ));
            }
            87..=97 => self.tick(),
            _ => {
                if self.rng.random_bool(0.5) {
                    self.restart(true);
                }
            }
        }
    }

    /// The invariants of issue 27, after every step.
    fn check(&self) {
        let state = self.core.state();
        for session in state.sessions() {
            // At most one presented form per session, and only its head.
            let presented: Vec<u64> = session
                .forms
                .iter()
                .copied()
                .filter(|id| state.form(id).is_some_and(|f| f.presenter.is_some()))
                .collect();
            if presented.len() > 1 {
                self.fail(&format!("session {} presents {presented:?}", session.record.id));
            }
            if let Some(id) = presented.first()
                && session.queue.front() != Some(id)
            {
                self.fail(&format!("form {id} is presented but is not its session's head"));
            }
            // Queue order is submission order.
            if session
                .queue
                .iter()
                .zip(session.queue.iter().skip(1))
                .any(|(a, b)| a >= b)
            {
                self.fail(&format!(
                    "session {} queues {:?}",
                    session.record.id, session.queue
                ));
            }
        }
        // Every acknowledged submission is pending, answered, or in
        // history exactly once with a reason.
        let mut records: HashMap<u64, Vec<&HistoryRecord>> = HashMap::new();
        for record in &self.disk.history {
            records.entry(record.form).or_default().push(record);
        }
        if let Some((form, twice)) = records.iter().find(|(_, r)| r.len() > 1) {
            self.fail(&format!("form {form} has {} history records", twice.len()));
        }
        for form in self.acknowledged.keys() {
            let live = state.form(form).is_some();
            let retiring = self.queue.iter().any(|q| {
                q.writes
                    .iter()
                    .any(|w| matches!(w, Write::History(h) if h.form == *form))
            });
            let ended = records.get(form).is_some_and(|r| !r[0].reason.is_empty());
            // Its owner had the outcome and acknowledged it: done, even if
            // the lazily flushed acknowledgement is lost (the outcome
            // comes back after a restart, as pending).
            let delivered = self.delivered.contains(form);
            if !live && !ended && !retiring && !delivered {
                self.fail(&format!(
                    "acknowledged form {form} is neither pending, answered nor withdrawn"
                ));
            }
        }
        // Nothing stays presented to a front-end that is gone, and what a
        // front-end shows is what the core presents to it.
        for form in state.forms() {
            if let Some(p) = &form.presenter
                && !self
                    .frontends
                    .get(&p.bus_name)
                    .is_some_and(|f| f.alive && f.registered)
            {
                self.fail(&format!(
                    "form {} is presented to {}, which is gone",
                    form.record.id, p.bus_name
                ));
            }
        }
        for (name, f) in self.frontends.iter().filter(|(_, f)| f.alive && f.registered) {
            for id in f.shown.keys() {
                let answering = self
                    .asked
                    .values()
                    .any(|a| matches!(a, Asked::Answer { frontend, form } if frontend == name && form == id));
                let presented = state
                    .form(id)
                    .and_then(|f| f.presenter.as_ref())
                    .is_some_and(|p| &p.bus_name == name);
                if !presented && !answering {
                    self.fail(&format!(
                        "{name} still shows form {id}, which the core no longer presents to it"
                    ));
                }
            }
        }
        // Deadlines: the core asks to be woken no later than the earliest.
        if let (Some(earliest), timeout) = (self.core.deadlines.earliest(), self.core.next_timeout())
            && timeout.is_none_or(|t| t > earliest)
        {
            self.fail("the next timeout is later than the earliest deadline");
        }
        for form in state.forms() {
            let waiting = form.ready
                && form.record.state != FormState::Answered
                && !form.finishing
                && !form.retiring
                && form.record.deadline_ms.is_some();
            if waiting && self.core.deadlines.of(form.record.id).is_none() {
                self.fail(&format!("form {} has a deadline nobody watches", form.record.id));
            }
        }
    }
}

/// A batch in a few words, for the log of a failing seed.
fn describe(writes: &[Write]) -> String {
    let words: Vec<String> = writes
        .iter()
        .map(|w| match w {
            Write::PutSession(s) => format!("session {}", s.id),
            Write::RemoveSession(id) => format!("-session {id}"),
            Write::PutForm(f) => format!("form {} {}", f.id, f.state.name()),
            Write::RemoveForm(id) => format!("-form {id}"),
            Write::EraseAnswer(id) => format!("-answer {id}"),
            Write::History(h) => format!("history {} {}", h.form, h.reason),
            Write::PutRegistration(id, _) => format!("registration {id}"),
            Write::RemoveRegistration(id) => format!("-registration {id}"),
        })
        .collect();
    words.join(", ")
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
