//! `elicit proxy`: a transparent stdio relay between any MCP host and any
//! MCP server that answers the server's elicitations through elicitd.
//!
//! Lines travel byte for byte unless the proxy must act on them:
//!
//! * [`framing`] — newline-delimited lines with a size cap;
//! * [`buffers`] — line buffers reused between the readers and writers;
//! * [`message`] — JSON-RPC classification and the messages the proxy writes;
//! * [`head`] — a server's response read only as far as its envelope;
//! * [`caps`] — era detection and the elicitation capability merge;
//! * [`owner`] — which host request or task a 2025-era form serves;
//! * [`hub`] — hosts that run their servers from a detached hub;
//! * [`decide`] — every decision of the relay as plain code, from input
//!   lines and broker replies to output lines and broker calls: the
//!   capability rewrite per era, 2025-era `elicitation/create`, URL mode
//!   and -32042, 2026-07-28 `input_required` rounds, 2025-11-25 tasks,
//!   cancellation, the no-broker fallback;
//! * [`actor`] — carries out those decisions, its tasks its own;
//! * [`asked`] — how many forms wait for the broker, for whoever runs the relay;
//! * [`backlog`] — how much waits for each writer, and the bound on it;
//! * [`outbox`] — the two outgoing streams;
//! * [`broker`] — the proxy's one broker session;
//! * [`stdio`] — the host's end, polled directly when it is a pipe;
//! * [`server`] — the server's process tree and its TERM-then-KILL end;
//! * [`warden`] — the process that ends that tree when the proxy ends;
//! * [`procfs`] — who started whom, as `/proc` shows it;
//! * [`say`] — the proxy's own lines on stderr, which never panic;
//! * [`relay`] — the process, the two streams, the core and its actor.
//!
//! `REMOTE.md` beside this file shows how an agent on another machine
//! reaches the desktop's elicitd.

pub mod actor;
pub mod asked;
pub mod backlog;
pub mod broker;
pub mod buffers;
pub mod cancel;
pub mod caps;
pub mod decide;
mod error;
pub mod framing;
pub mod head;
pub mod hub;
pub mod message;
pub mod outbox;
pub mod owner;
pub mod parent;
pub mod procfs;
pub mod relay;
pub mod say;
pub mod server;
pub mod stdio;
pub mod verify;
pub mod warden;

use std::time::Duration;

pub use error::ProxyError;
pub use relay::{Ends, ServerEnd, run, run_with};

/// Who answers a 2025-era elicitation when the host can too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prefer {
    /// elicitd answers; the host never sees the request.
    #[default]
    Broker,
    /// The host answers what it declared it can render; elicitd the rest.
    Host,
}

/// What an elicitation gets when elicitd cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoBroker {
    /// The host, when it declared the mode; cancel otherwise (nobody was
    /// asked, so nobody declined).
    #[default]
    Auto,
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
    /// The host, when it declared the mode; cancel otherwise.
    Host,
}

/// How one proxy runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The server's command line; the first item is the program.
    pub command: Vec<String>,
    /// The broker's bus address; the session bus when `None`.
    pub bus: Option<String>,
    /// Who answers when the host can.
    pub prefer: Prefer,
    /// The fallback without elicitd.
    pub no_broker: NoBroker,
    /// Rounds of 2026-07-28 input one request may take.
    pub max_rounds: u32,
    /// How often progress is sent while a form is open.
    pub keepalive: Duration,
    /// The longest line accepted from either peer.
    pub max_line_bytes: usize,
    /// How long the server may take to exit after the host closed stdin,
    /// and again after TERM before KILL.
    pub exit_grace: Duration,
    /// Limits of the schema check.
    pub limits: elicit_proto::Limits,
    /// The host's process as the stdio proxy's parent shows it
    /// ([`parent::describe`]): the origin's host where the host's
    /// `clientInfo` is a placeholder. `None` for `elicit serve`, whose
    /// parent is no host.
    pub host_process: Option<String>,
    /// Where the relay keeps the count of its forms waiting for the
    /// broker, for whoever runs it to read.
    pub asked: asked::Asked,
}

impl Options {
    /// Defaults for `command`.
    pub fn new(command: Vec<String>) -> Self {
        Options {
            command,
            bus: None,
            prefer: Prefer::default(),
            no_broker: NoBroker::default(),
            max_rounds: 10,
            keepalive: Duration::from_secs(10),
            max_line_bytes: 64 * 1024 * 1024,
            exit_grace: Duration::from_secs(5),
            limits: elicit_proto::Limits::default(),
            host_process: None,
            asked: asked::Asked::default(),
        }
    }
}
