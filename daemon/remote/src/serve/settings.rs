//! What one `elicit serve` serves, and where.

use std::path::PathBuf;
use std::time::Duration;

use super::ServeError;
use super::idle::IdleRules;
use super::listen::Listen;

/// What stands behind one endpoint.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// A stdio MCP server started for each session (and once for the
    /// shared 2026-07-28 relay).
    Command(Vec<String>),
    /// A remote Streamable HTTP server, and how to reach it.
    Url(Box<crate::bridge::Options>),
}

/// One MCP endpoint: a path and what it fronts.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The URL path, e.g. `/mcp` or `/github/mcp`.
    pub path: String,
    /// What it fronts.
    pub upstream: Upstream,
}

/// Where the bearer token comes from, if one is required.
#[derive(Debug, Clone, Default)]
pub enum Token {
    /// No token: a client of this user that passes the Host and Origin
    /// checks may connect.
    #[default]
    None,
    /// An existing token, read from this file.
    File(PathBuf),
    /// A fresh token, written to this file (the default place when
    /// `None`).
    Generate(Option<PathBuf>),
}

/// How much one server holds at most; past each bound, a request is
/// refused rather than memory grown.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The largest POST body, in bytes.
    pub max_body: usize,
    /// Bytes of request bodies held at once, across every request and
    /// endpoint, until the relays have read them.
    pub max_bodies: usize,
    /// How long a body waits for its share of `max_bodies` before it is
    /// refused (503).
    pub body_wait: Duration,
    /// Sessions open at once, per endpoint (each runs a relay, and for a
    /// command a process); a new one ends the longest idle when full.
    pub max_sessions: usize,
    /// Requests in flight at once, per session (and on the shared relay).
    pub max_streams: usize,
    /// Bytes of events kept per SSE stream for a client that reconnects
    /// (and for messages waiting for a stream to open).
    pub replay_bytes: usize,
    /// How long a client may leave an event unread before its connection
    /// is dropped (its events stay for a reconnection).
    pub slow_client: Duration,
    /// How long a stateful session without a client connection stays.
    pub idle: IdleRules,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: 64 * 1024 * 1024,
            max_bodies: 128 * 1024 * 1024,
            body_wait: Duration::from_secs(5),
            max_sessions: 32,
            max_streams: 128,
            replay_bytes: 4 * 1024 * 1024,
            slow_client: Duration::from_secs(10),
            idle: IdleRules::default(),
        }
    }
}

/// Everything `elicit serve` needs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to listen: a loopback address (port 0: any free port) or a
    /// Unix socket.
    pub listen: Listen,
    /// The bearer token, if required.
    pub token: Token,
    /// The endpoints served.
    pub endpoints: Vec<Endpoint>,
    /// How each relay runs; `command` is replaced per upstream.
    pub proxy: elicit_proxy::Options,
    /// The bounds.
    pub limits: Limits,
}

impl Settings {
    /// Refuses what cannot be served: a non-loopback address, no endpoint.
    pub fn check(&self) -> Result<(), ServeError> {
        if let Listen::Tcp(address) = &self.listen
            && !address.ip().is_loopback()
        {
            return Err(ServeError::NotLoopback(*address));
        }
        if self.endpoints.is_empty() {
            return Err(ServeError::NoUpstream);
        }
        Ok(())
    }
}
