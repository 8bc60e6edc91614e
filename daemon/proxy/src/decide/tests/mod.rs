//! The core's decisions, one table per era: each row feeds the core a
//! sequence of inputs and expects exactly the effects they lead to, with
//! no process, no broker and no stream.

mod era_2025_06;
mod era_2025_11;
mod era_2026;
mod unseen;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{Config, Core, Effect, Input, Line, OriginChange, Peer, Reply};
use crate::framing::Frame;
use crate::{NoBroker, Prefer};

/// An effect as a row writes it: lines parsed, so that rows compare
/// messages; `Raw` marks a line passed on byte for byte.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum E {
    /// A message the proxy wrote to the host.
    Host(Value),
    /// A line passed to the host as it came.
    RawHost(Value),
    /// A message the proxy wrote to the server.
    Server(Value),
    /// A line passed to the server as it came.
    RawServer(Value),
    Ask(u64, Value, Option<u64>),
    Withdraw(u64),
    Start(u64),
    Stop(u64),
    Origin(OriginChange),
    Say(String),
}

fn expected(effect: Effect) -> E {
    let parse = |line: &[u8]| serde_json::from_slice(line).unwrap_or(Value::Null);
    match effect {
        Effect::Send(Peer::Host, Line::Json(v)) => E::Host(v),
        Effect::Send(Peer::Server, Line::Json(v)) => E::Server(v),
        Effect::Send(Peer::Host, Line::Raw(l)) => E::RawHost(parse(&l)),
        Effect::Send(Peer::Server, Line::Raw(l)) => E::RawServer(parse(&l)),
        Effect::Ask {
            ask,
            params,
            timeout_secs,
        } => E::Ask(ask, params, timeout_secs),
        Effect::Withdraw(a) => E::Withdraw(a),
        Effect::StartKeepalive(a) => E::Start(a),
        Effect::StopKeepalive(a) => E::Stop(a),
        Effect::Origin(o) => E::Origin(o),
        Effect::Say(s) => E::Say(s),
    }
}

/// One input of a row.
pub(super) enum Step {
    Host(Value),
    Server(Value),
    /// A line that is not JSON, from the host.
    HostBytes(&'static [u8]),
    Reply(u64, Reply),
    Tick(u64, u64),
    /// The broker's word that nobody shows form (ask, broker id, why).
    Unseen(u64, &'static str, &'static str),
    HostLeft,
}

/// One row: the configuration, inputs whose effects it ignores (the
/// setting), the inputs it checks, and their effects in order.
pub(super) struct Row {
    pub name: &'static str,
    pub config: Config,
    pub setup: Vec<Step>,
    pub steps: Vec<Step>,
    pub expect: Vec<E>,
}

/// The time of every row: tasks stamp it.
pub(super) fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default()
}

/// The stamp of [`now`] as a task shows it.
pub(super) const STAMP: &str = "2027-01-15T08:00:00.000Z";

/// The defaults, as `elicit proxy` runs without options; pid 7.
pub(super) fn config() -> Config {
    Config {
        prefer: Prefer::Broker,
        no_broker: NoBroker::Auto,
        max_rounds: 10,
        max_line_bytes: 1024,
        limits: elicit_proto::Limits::default(),
        host_process: None,
        pid: 7,
    }
}

pub(super) fn with(f: impl FnOnce(&mut Config)) -> Config {
    let mut c = config();
    f(&mut c);
    c
}

fn input(step: Step) -> Input {
    let line = |v: &Value| Frame::Line(serde_json::to_vec(v).unwrap_or_default());
    match step {
        Step::Host(v) => Input::Host(line(&v)),
        Step::Server(v) => Input::Server(line(&v)),
        Step::HostBytes(b) => Input::Host(Frame::Line(b.to_vec())),
        Step::Reply(ask, reply) => Input::Reply { ask, reply },
        Step::Tick(keepalive, progress) => Input::Tick { keepalive, progress },
        Step::Unseen(ask, form, why) => Input::Unseen {
            ask,
            form: form.to_owned(),
            why: why.to_owned(),
        },
        Step::HostLeft => Input::HostLeft,
    }
}

/// Runs every row; fails naming each row whose effects differ.
pub(super) fn run(rows: Vec<Row>) -> usize {
    let count = rows.len();
    let mut failures = Vec::new();
    for row in rows {
        let mut core = Core::new(row.config);
        for step in row.setup {
            core.handle(now(), input(step));
        }
        let mut got = Vec::new();
        for step in row.steps {
            got.extend(core.handle(now(), input(step)).into_iter().map(expected));
        }
        if got != row.expect {
            failures.push(format!(
                "{}:\n  got      {got:?}\n  expected {:?}",
                row.name, row.expect
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    count
}

// Messages the rows share.

pub(super) fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub(super) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub(super) fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(super) fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A form asking a name.
pub(super) fn form() -> Value {
    json!({"message": "Your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

/// A URL form.
pub(super) fn url_form(eid: &str) -> Value {
    json!({"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "elicitationId": eid})
}

pub(super) fn accept() -> Reply {
    Reply::Answered {
        action: "accept".into(),
        content: Some(json!({"name": "Ada"})),
    }
}

pub(super) fn answered(action: &str) -> Reply {
    Reply::Answered {
        action: action.into(),
        content: Some(json!({"name": "ignored"})),
    }
}

pub(super) fn accepted() -> Value {
    json!({"action": "accept", "content": {"name": "Ada"}})
}

pub(super) fn unavailable() -> Reply {
    Reply::Unavailable("no bus".into())
}

/// What the proxy says when the form goes to the host.
pub(super) const TO_HOST: &str = "elicit proxy: warning: elicitd cannot be reached (no bus); the server's form goes to the host, and a headless host answers it without asking anyone (`claude -p` cancels it, `copilot -p` declines it)";

/// What the proxy says when nobody was asked and it answered `said`.
pub(super) fn unasked(said: &str) -> String {
    format!(
        "elicit proxy: nobody was asked: elicitd cannot be reached (no bus), so the server's form was answered {said} (see `elicit proxy --no-broker`)"
    )
}

/// The warning as a log message to the host.
pub(super) fn log(text: &str) -> E {
    E::Host(notification(
        "notifications/message",
        json!({"level": "warning", "logger": "elicit-proxy", "data": text}),
    ))
}

/// The reason elicit-proto gives for `params`.
pub(super) fn invalid(params: &Value) -> String {
    super::fallback::check(params, &elicit_proto::Limits::default())
        .err()
        .unwrap_or_default()
}
