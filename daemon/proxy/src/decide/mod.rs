//! The relay's decisions as plain code: no `async`, no tokio, no zbus, no
//! clock, no stream.
//!
//! The actor ([`crate::actor`]) feeds the [`Core`] every [`Input`] with the
//! time ([`Core::handle`]): a line from the host or the server, the
//! broker's reply to a form, a keep-alive tick, the host leaving. It
//! carries out the [`Effect`]s it returns in order: lines to write, forms
//! to ask or withdraw, keep-alives to start or stop, the origin to update.
//! Everything the relay remembers between lines lives here:
//!
//! * [`host`] — the host's lines: capability rewrite per era, cancellation;
//! * [`server`] — the server's lines: what to act on, what to pass;
//! * [`legacy`] — 2025-era `elicitation/create`, URL mode and -32042;
//! * [`fallback`] — a broker reply as a decision, the no-broker fallback;
//! * [`rounds`] — 2026-07-28 `input_required` rounds;
//! * [`tasks`] — 2025-11-25 task-augmented elicitations, served as tasks;
//! * [`task_forms`] — the forms of those tasks;
//! * [`io`] — the inputs, the effects and the configuration.

mod fallback;
mod host;
pub mod io;
mod legacy;
mod rounds;
mod server;
mod task_forms;
pub mod tasks;
mod unseen;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

pub use io::{Config, Effect, Input, Line, OriginChange, Peer, Reply};
pub use rounds::is_input_required;

use super::caps::HostCaps;
use super::message;
use super::owner::Owner;

/// The prefix of the ids of the proxy's own requests (2026-07-28 retries,
/// forms the host answers for a task), which no host or server uses: their
/// responses come back to the core instead of being forwarded.
pub const ID_PREFIX: &str = "elicitd-proxy-";

/// Names one form asked of the broker, or one keep-alive.
pub type AskId = u64;

/// A host request the server has not answered yet.
#[derive(Debug, Clone)]
struct HostRequest {
    /// `params._meta.progressToken`, for keep-alive progress.
    progress_token: Option<Value>,
    /// A 2026-07-28 `tools/call`, `prompts/get` or `resources/read` as the
    /// server saw it: the proxy retries it when the result asks for input.
    retryable: Option<Value>,
}

/// A server `elicitation/create` in flight.
#[derive(Debug, Clone)]
struct ServerElicitation {
    /// The broker's form, while the broker has it.
    ask: Option<AskId>,
    /// The host answers it (`--prefer host` or the no-broker fallback), so
    /// the server's notifications about it go to the host too.
    forwarded: bool,
    /// The host request or task it serves, when the proxy can tell.
    owner: Option<Owner>,
    /// Withdrawn because every possible owner ended (the host cancelled
    /// them, or the server answered them): the server, which
    /// may not honour that cancellation, gets `cancel` as the answer.
    by_host: bool,
}

/// What a form asked of the broker is for.
#[derive(Debug)]
enum AskFor {
    /// A server's 2025-era `elicitation/create`.
    Legacy(legacy::Form),
    /// One entry of a 2026-07-28 round of the host request `host` (key).
    Round { host: String, entry: String },
    /// One URL elicitation of a -32042 error.
    Consent {
        consent: AskId,
        eid: Option<String>,
        mode: String,
    },
    /// The form of one of the proxy's tasks.
    Task { task: String, params: Value },
}

/// What a keep-alive reports progress for.
#[derive(Debug)]
enum Tokens {
    /// Every host request still open (a 2025-era form serves any of them).
    Open,
    /// These (a 2026-07-28 round serves its own request).
    Fixed(Vec<Value>),
}

/// A request of the proxy's own waiting for its response.
#[derive(Debug)]
enum Awaiting {
    /// The retry of the host request `0` (key) with a round's answers.
    Retry(String),
    /// The host answering the form of the task `0`.
    HostForm(String),
}

/// The relay's decisions and memory.
#[derive(Debug)]
pub struct Core {
    config: Config,
    /// What the host declared it can do itself.
    host_caps: HostCaps,
    /// The least severe log level the host asked for, if it did.
    host_log_level: Option<String>,
    /// Ids (as keys) of the host's `initialize` requests, whose results
    /// name the server.
    initialize_ids: HashSet<String>,
    /// The host's unanswered requests, by id key.
    host_requests: HashMap<String, HostRequest>,
    /// The server's elicitations in flight, by id key.
    server_elicitations: HashMap<String, ServerElicitation>,
    /// `elicitationId`s of URL elicitations the proxy answered: their
    /// `notifications/elicitation/complete` is not the host's business.
    handled_url_ids: HashSet<String>,
    /// The forms the broker has, by what they are for.
    asks: HashMap<AskId, AskFor>,
    /// Keep-alives running.
    keepalives: HashMap<AskId, Tokens>,
    /// 2026-07-28 requests in their rounds, by the host's id key.
    rounds: HashMap<String, rounds::Round>,
    /// -32042 errors held until their URL forms are answered.
    consents: HashMap<AskId, legacy::Consent>,
    /// The proxy's own requests, by id key.
    own: HashMap<String, Awaiting>,
    /// The proxy's tasks.
    tasks: tasks::Tasks,
    next_ask: AskId,
    next_own: u64,
}

impl Core {
    /// A core for one relay.
    pub fn new(config: Config) -> Core {
        Core {
            config,
            host_caps: HostCaps::default(),
            host_log_level: None,
            initialize_ids: HashSet::new(),
            host_requests: HashMap::new(),
            server_elicitations: HashMap::new(),
            handled_url_ids: HashSet::new(),
            asks: HashMap::new(),
            keepalives: HashMap::new(),
            rounds: HashMap::new(),
            consents: HashMap::new(),
            own: HashMap::new(),
            tasks: tasks::Tasks::default(),
            next_ask: 0,
            next_own: 0,
        }
    }

    /// One step: what `input` at `now` makes the relay do, in order.
    pub fn handle(&mut self, now: DateTime<Utc>, input: Input) -> Vec<Effect> {
        let mut out = Out::default();
        match input {
            Input::Host(frame) => self.host_line(now, frame, &mut out),
            Input::Server(frame) => self.server_line(now, frame, &mut out),
            Input::Reply { ask, reply } => self.on_reply(now, ask, reply, &mut out),
            Input::Tick { keepalive, progress } => self.on_tick(keepalive, progress, &mut out),
            Input::Unseen { ask, form, why } => self.on_unseen(ask, &form, &why, &mut out),
            Input::HostLeft => self.withdraw_everything(now, &mut out),
        }
        out.0
    }

    fn next_id(&mut self) -> AskId {
        self.next_ask += 1;
        self.next_ask
    }

    /// A fresh id for a request of the proxy's own.
    fn fresh_own_id(&mut self) -> Value {
        self.next_own += 1;
        Value::String(format!("{ID_PREFIX}{}", self.next_own))
    }

    fn on_reply(&mut self, now: DateTime<Utc>, ask: AskId, reply: Reply, out: &mut Out) {
        let Some(asked) = self.asks.remove(&ask) else {
            return;
        };
        match asked {
            AskFor::Legacy(form) => self.legacy_reply(ask, form, reply, out),
            AskFor::Round { host, entry } => self.round_reply(ask, &host, entry, reply, out),
            AskFor::Consent { consent, eid, mode } => self.consent_reply(consent, eid, &mode, reply, out),
            AskFor::Task { task, params } => self.task_reply(now, ask, task, params, reply, out),
        }
    }

    fn on_tick(&mut self, keepalive: AskId, progress: u64, out: &mut Out) {
        let tokens = match self.keepalives.get(&keepalive) {
            None => return,
            Some(Tokens::Open) => self.open_progress_tokens(),
            Some(Tokens::Fixed(tokens)) => tokens.clone(),
        };
        for token in tokens {
            let note = message::notification(
                "notifications/progress",
                serde_json::json!({
                    "progressToken": token,
                    "progress": progress,
                    "message": "waiting for the user to answer a form (elicitd)",
                }),
            );
            out.send(Peer::Host, note);
        }
    }

    fn start_keepalive(&mut self, keepalive: AskId, tokens: Tokens, out: &mut Out) {
        self.keepalives.insert(keepalive, tokens);
        out.0.push(Effect::StartKeepalive(keepalive));
    }

    fn stop_keepalive(&mut self, keepalive: AskId, out: &mut Out) {
        if self.keepalives.remove(&keepalive).is_some() {
            out.0.push(Effect::StopKeepalive(keepalive));
        }
    }

    /// The progress tokens of every host request still open.
    fn open_progress_tokens(&self) -> Vec<Value> {
        self.host_requests
            .values()
            .filter_map(|r| r.progress_token.clone())
            .collect()
    }

    /// The host cancelled its request `key` (`notifications/cancelled`):
    /// its rounds end, and every form it was the last possible owner of is
    /// withdrawn (reason `cancelled`).
    fn host_cancelled_request(&mut self, key: &str, out: &mut Out) {
        if self.host_requests.remove(key).is_some() {
            self.cancel_round(key, out);
        }
        self.request_ended(key, true, out);
    }

    /// The host request `key` ended, cancelled by the host (`by_host`) or
    /// answered: a form that only it and other ended requests could have
    /// been waiting on, one of them cancelled, has nobody left to give its
    /// answer to, and is withdrawn (see [`Owner::request_ended`]).
    fn request_ended(&mut self, key: &str, by_host: bool, out: &mut Out) {
        for elicitation in self.server_elicitations.values_mut() {
            if !elicitation.forwarded
                && let Some(owner) = elicitation.owner.as_mut()
                && owner.request_ended(key, by_host)
            {
                Self::orphaned(elicitation, out);
            }
        }
    }

    /// The host cancelled its task `task` (`tasks/cancel`): every form of
    /// that task is withdrawn (reason `cancelled`).
    fn host_cancelled_task(&mut self, task: &str, out: &mut Out) {
        for elicitation in self.server_elicitations.values_mut() {
            if !elicitation.forwarded && matches!(&elicitation.owner, Some(Owner::Task(t)) if t == task) {
                Self::orphaned(elicitation, out);
            }
        }
    }

    /// Withdraws a form nobody is left to want: the server, which may not
    /// honour the host's cancellation, gets `cancel` as its answer.
    fn orphaned(elicitation: &mut ServerElicitation, out: &mut Out) {
        elicitation.by_host = true;
        if let Some(ask) = elicitation.ask {
            out.0.push(Effect::Withdraw(ask));
        }
    }

    /// The host left (or the relay ends): every form still open is
    /// withdrawn, every round ends.
    fn withdraw_everything(&mut self, now: DateTime<Utc>, out: &mut Out) {
        let keys: Vec<String> = self.rounds.keys().cloned().collect();
        for key in keys {
            self.cancel_round(&key, out);
        }
        for elicitation in self.server_elicitations.values() {
            if let Some(ask) = elicitation.ask {
                out.0.push(Effect::Withdraw(ask));
            }
        }
        self.cancel_all_tasks(now, out);
    }

    /// Whether the host wants a log message of `level`: always, unless it
    /// set a stricter level with `logging/setLevel`.
    fn host_logs(&self, level: &str) -> bool {
        let rank = |name: &str| LOG_LEVELS.iter().position(|l| *l == name);
        match (self.host_log_level.as_deref().and_then(rank), rank(level)) {
            (Some(least), Some(level)) => level >= least,
            _ => true,
        }
    }
}

/// RFC 5424 severities as MCP names them, least severe first.
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The effects of one step, with shorthands for the common ones.
#[derive(Debug, Default)]
struct Out(Vec<Effect>);

impl Out {
    /// A message the proxy wrote.
    fn send(&mut self, peer: Peer, message: Value) {
        self.0.push(Effect::Send(peer, Line::Json(message)));
    }

    /// A line as it came.
    fn raw(&mut self, peer: Peer, line: Vec<u8>) {
        self.0.push(Effect::Send(peer, Line::Raw(line)));
    }

    /// A line on the proxy's standard error.
    fn say(&mut self, text: String) {
        self.0.push(Effect::Say(text));
    }

    fn ask(&mut self, ask: AskId, params: Value, timeout_secs: Option<u64>) {
        self.0.push(Effect::Ask {
            ask,
            params,
            timeout_secs,
        });
    }
}
