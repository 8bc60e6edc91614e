//! The two outgoing streams.
//!
//! Every line to the host and every line to the server goes through one
//! channel each, so that lines from the relay and from its tasks never
//! interleave.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use super::backlog::Backlog;
use super::message;

pub use super::decide::Peer;
/// A line for a writer, or the order to close the stream.
#[derive(Debug)]
pub enum Out {
    /// One message, without its newline.
    Line(Vec<u8>),
    /// Close the stream (the server's stdin on EOF from the host).
    Close,
}

/// Handles to both writers.
#[derive(Debug, Clone)]
pub struct Outbox {
    host: Writer,
    server: Writer,
}

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
        Outbox { host, server }
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
}
