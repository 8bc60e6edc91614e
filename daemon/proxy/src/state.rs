//! What the relay remembers between lines.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use elicit_proto::dbus::Origin;
use serde_json::Value;

use super::Options;
use super::broker::Broker;
use super::cancel::Cancel;
use super::caps::HostCaps;
use super::outbox::Outbox;
use super::owner::Owner;
use super::tasks::Tasks;

/// A host request the server has not answered yet.
#[derive(Debug, Clone)]
pub struct HostRequest {
    /// `params._meta.progressToken`, for keep-alive progress.
    pub progress_token: Option<Value>,
    /// A 2026-07-28 `tools/call`, `prompts/get` or `resources/read` as the
    /// server saw it: the proxy retries it when the result asks for input.
    pub retryable: Option<Value>,
    /// Fired by the host's `notifications/cancelled`.
    pub cancel: Cancel,
}

/// A server `elicitation/create` in flight.
#[derive(Debug, Clone)]
pub struct ServerElicitation {
    /// Withdraws the form when the server cancels.
    pub cancel: Cancel,
    /// The host answers it (`--prefer host` or the no-broker fallback), so
    /// the server's notifications about it go to the host too.
    pub forwarded: bool,
    /// The host request or task it serves, when the proxy can tell.
    pub owner: Option<Owner>,
    /// Withdrawn because the host cancelled its owner: the server, which
    /// may not honour that cancellation, gets `cancel` as the answer.
    pub by_host: bool,
}

/// The relay's memory.
#[derive(Debug, Default)]
pub struct State {
    /// What the host declared it can do itself.
    pub host_caps: HostCaps,
    /// Ids (as keys) of the host's `initialize` requests, whose results
    /// name the server.
    pub initialize_ids: HashSet<String>,
    /// The host's unanswered requests, by id key.
    pub host_requests: HashMap<String, HostRequest>,
    /// The server's elicitations in flight, by id key.
    pub server_elicitations: HashMap<String, ServerElicitation>,
    /// The least severe log level the host asked for with
    /// `logging/setLevel`, if it did.
    pub host_log_level: Option<String>,
    /// `elicitationId`s of URL elicitations the proxy answered: their
    /// `notifications/elicitation/complete` is not the host's business.
    pub handled_url_ids: HashSet<String>,
    /// The tasks the proxy serves for task-augmented elicitations.
    pub tasks: Tasks,
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

impl State {
    /// Whether the host wants a log message of `level`: always, unless it
    /// set a stricter level with `logging/setLevel`.
    pub fn host_logs(&self, level: &str) -> bool {
        let rank = |name: &str| LOG_LEVELS.iter().position(|l| *l == name);
        match (self.host_log_level.as_deref().and_then(rank), rank(level)) {
            (Some(least), Some(level)) => level >= least,
            _ => true,
        }
    }
}

/// Everything a task of the relay needs; cheap to clone.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The outgoing streams.
    pub outbox: Outbox,
    /// The broker session.
    pub broker: Broker,
    /// Shared memory of the relay.
    pub state: Arc<Mutex<State>>,
    /// Who asks, for the broker session.
    pub origin: Arc<Mutex<Origin>>,
    /// The command-line choices.
    pub options: Arc<Options>,
}

impl Ctx {
    /// Locks the state. A poisoned lock (a panic elsewhere) still holds
    /// consistent maps, so it is used as it is rather than crashing.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Updates the origin.
    pub fn with_origin(&self, update: impl FnOnce(&mut Origin)) {
        let mut origin = self
            .origin
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        update(&mut origin);
    }

    /// Fires every cancellation flag: forms still open are withdrawn.
    pub fn cancel_everything(&self) {
        let state = self.state();
        for request in state.host_requests.values() {
            request.cancel.cancel();
        }
        for elicitation in state.server_elicitations.values() {
            elicitation.cancel.cancel();
        }
        state.tasks.cancel_all();
    }

    /// The host cancelled `owner` (`notifications/cancelled` for a request,
    /// `tasks/cancel` for a task): its keep-alive stops, and every form
    /// only it was waiting on is withdrawn (reason `cancelled`).
    pub fn host_cancelled(&self, owner: &Owner) {
        let mut state = self.state();
        if let Owner::Request(key) = owner
            && let Some(request) = state.host_requests.remove(key)
        {
            request.cancel.cancel();
        }
        for elicitation in state.server_elicitations.values_mut() {
            if !elicitation.forwarded && elicitation.owner.as_ref() == Some(owner) {
                elicitation.by_host = true;
                elicitation.cancel.cancel();
            }
        }
    }

    /// The progress tokens of every host request still open.
    pub fn open_progress_tokens(&self) -> Vec<Value> {
        self.state()
            .host_requests
            .values()
            .filter_map(|r| r.progress_token.clone())
            .collect()
    }
}
