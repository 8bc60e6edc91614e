//! What goes into the core and what comes out of it.

use serde_json::Value;

use super::AskId;
use crate::framing::Frame;
use crate::{NoBroker, Options, Prefer};

/// Which peer a message goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The MCP host (our stdout).
    Host,
    /// The MCP server (its stdin).
    Server,
}

/// The command-line choices the decisions depend on.
#[derive(Debug, Clone)]
pub struct Config {
    /// Who answers when the host can.
    pub prefer: Prefer,
    /// The fallback without elicitd.
    pub no_broker: NoBroker,
    /// Rounds of 2026-07-28 input one request may take.
    pub max_rounds: u32,
    /// The longest line accepted, for the message about one dropped.
    pub max_line_bytes: usize,
    /// Limits of the schema check.
    pub limits: elicit_proto::Limits,
    /// The host's process, named where the host's `clientInfo` is a
    /// placeholder.
    pub host_process: Option<String>,
    /// The proxy's process id, part of its task ids.
    pub pid: u32,
}

impl Config {
    /// The choices of `options`, for this process.
    pub fn of(options: &Options) -> Config {
        Config {
            prefer: options.prefer,
            no_broker: options.no_broker,
            max_rounds: options.max_rounds,
            max_line_bytes: options.max_line_bytes,
            limits: options.limits.clone(),
            host_process: options.host_process.clone(),
            pid: std::process::id(),
        }
    }
}

/// What the broker made of one form.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The user's (or a rule's, or the deadline's) answer.
    Answered {
        /// accept, decline or cancel.
        action: String,
        /// The content, on accept in form mode.
        content: Option<Value>,
    },
    /// The broker refused the request (a limit, a policy error).
    Refused {
        /// The JSON-RPC code of the refusal.
        code: i64,
        /// Why, in the broker's words.
        detail: String,
    },
    /// elicitd could not be reached: the no-broker fallback applies.
    Unavailable(String),
    /// Withdrawn before an answer came.
    Withdrawn,
}

/// One thing that happened to the relay.
#[derive(Debug)]
pub enum Input {
    /// A line (or an overlong one) from the host.
    Host(Frame),
    /// A line (or an overlong one) from the server.
    Server(Frame),
    /// The broker's reply to the form `ask`.
    Reply {
        /// The form, as [`Effect::Ask`] named it.
        ask: AskId,
        /// What became of it.
        reply: Reply,
    },
    /// Another period of the keep-alive `keepalive` has passed.
    Tick {
        /// As [`Effect::StartKeepalive`] named it.
        keepalive: AskId,
        /// How many periods so far, from 1.
        progress: u64,
    },
    /// The broker says nobody shows the form `ask`, and no front-end
    /// program could be started for it.
    Unseen {
        /// The form, as [`Effect::Ask`] named it.
        ask: AskId,
        /// Its id in the broker, as `elicit answer` takes it.
        form: String,
        /// Why nobody shows it, in the broker's words.
        why: String,
    },
    /// The host left, or the relay ends: every form goes.
    HostLeft,
}

/// A line to write.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Bytes exactly as a peer sent them.
    Raw(Vec<u8>),
    /// A message the proxy made or changed.
    Json(Value),
}

/// A change of who asks, as forms name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginChange {
    /// The host named itself (or its process stands in for it).
    Host {
        /// Its name.
        name: Option<String>,
        /// Its version.
        version: Option<String>,
    },
    /// The server named itself.
    Server {
        /// Its name.
        name: String,
        /// Its version.
        version: Option<String>,
    },
}

/// One thing for the actor to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Write a line to a peer.
    Send(Peer, Line),
    /// Ask the broker these `elicitation/create` params; the reply comes
    /// back as [`Input::Reply`].
    Ask {
        /// Names the form.
        ask: AskId,
        /// The params.
        params: Value,
        /// The form's deadline, after which the broker cancels it.
        timeout_secs: Option<u64>,
    },
    /// Withdraw the form (its reply is still awaited).
    Withdraw(AskId),
    /// Send [`Input::Tick`] every keep-alive period until stopped.
    StartKeepalive(AskId),
    /// Stop that.
    StopKeepalive(AskId),
    /// Update the origin the broker session names.
    Origin(OriginChange),
    /// Say this on the proxy's standard error.
    Say(String),
}
