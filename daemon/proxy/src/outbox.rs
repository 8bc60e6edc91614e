//! The two outgoing streams, and the requests the proxy itself sends.
//!
//! Every line to the host and every line to the server goes through one
//! channel each, so that lines from the relay and from its tasks never
//! interleave. Requests the proxy makes on its own (2026-07-28 retries,
//! entries the host must answer) get ids of the form `elicitd-proxy-N`,
//! which no host or server uses, and their responses are routed back here
//! instead of being forwarded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::backlog::Backlog;
use super::message;

/// A line for a writer, or the order to close the stream.
#[derive(Debug)]
pub enum Out {
    /// One message, without its newline.
    Line(Vec<u8>),
    /// Close the stream (the server's stdin on EOF from the host).
    Close,
}

/// Which peer a message goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The MCP host (our stdout).
    Host,
    /// The MCP server (its stdin).
    Server,
}

/// Handles to both writers and the table of the proxy's own requests.
#[derive(Debug, Clone)]
pub struct Outbox {
    host: Writer,
    server: Writer,
    pending: Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>,
    next: Arc<AtomicU64>,
}

/// The prefix of the ids of the proxy's own requests.
pub const ID_PREFIX: &str = "elicitd-proxy-";

/// The channel to one writer and the count of what waits in it.
#[derive(Debug, Clone)]
pub struct Writer {
    lines: mpsc::UnboundedSender<Out>,
    backlog: Arc<Backlog>,
}

impl Writer {
    /// A channel to a writer, with the backlog that writer drains.
    pub fn new(lines: mpsc::UnboundedSender<Out>, backlog: Arc<Backlog>) -> Self {
        Writer { lines, backlog }
    }
}

impl Outbox {
    /// Wraps the two writers.
    pub fn new(host: Writer, server: Writer) -> Self {
        Outbox {
            host,
            server,
            pending: Arc::default(),
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    fn writer(&self, peer: Peer) -> &Writer {
        match peer {
            Peer::Host => &self.host,
            Peer::Server => &self.server,
        }
    }

    /// Sends raw bytes (a line as it came) to `peer`.
    pub fn raw(&self, peer: Peer, line: Vec<u8>) {
        let writer = self.writer(peer);
        let bytes = line.len();
        writer.backlog.add(bytes);
        // A closed writer means that peer is gone; the relay notices on
        // its own and shuts down.
        if writer.lines.send(Out::Line(line)).is_err() {
            writer.backlog.drained(bytes);
        }
    }

    /// Returns once the queue towards `peer` has room (see
    /// [`Backlog::room`]); the relay waits for it before reading a line
    /// that may go there.
    pub async fn room(&self, peer: Peer) {
        self.writer(peer).backlog.room().await;
    }

    /// Sends a message to `peer`.
    pub fn send(&self, peer: Peer, message: &Value) {
        self.raw(peer, message::to_line(message));
    }

    /// Closes the server's stdin.
    pub fn close_server(&self) {
        let _ = self.server.lines.send(Out::Close);
    }

    /// Stops the host writer after the lines queued so far.
    pub fn close_host(&self) {
        let _ = self.host.lines.send(Out::Close);
    }

    /// A fresh id for a request of the proxy's own.
    pub fn fresh_id(&self) -> Value {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Value::String(format!("{ID_PREFIX}{n}"))
    }

    /// Sends `message` (whose id came from [`Outbox::fresh_id`]) to `peer`;
    /// the receiver yields the whole response message.
    pub fn request(&self, peer: Peer, message: &Value) -> oneshot::Receiver<Value> {
        let (sender, receiver) = oneshot::channel();
        if let Some(id) = message::id(message)
            && let Ok(mut pending) = self.pending.lock()
        {
            pending.insert(message::id_key(id), sender);
        }
        self.send(peer, message);
        receiver
    }

    /// Forgets a request whose answer no longer matters.
    pub fn forget(&self, id: &Value) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(&message::id_key(id));
        }
    }

    /// Routes a response to the proxy's own request; gives it back when it
    /// belongs to someone else.
    pub fn deliver(&self, response: Value) -> Option<Value> {
        let Some(id) = message::id(&response) else {
            return Some(response);
        };
        if !id.as_str().is_some_and(|s| s.starts_with(ID_PREFIX)) {
            return Some(response);
        }
        let sender = self
            .pending
            .lock()
            .ok()
            .and_then(|mut pending| pending.remove(&message::id_key(id)));
        match sender {
            Some(sender) => {
                let _ = sender.send(response);
                None
            }
            // A late answer to a cancelled request: swallowed, the peer
            // never asked for it.
            None => None,
        }
    }
}
