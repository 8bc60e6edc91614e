//! One SSE stream of a session, apart from the HTTP connections that
//! carry it: a client that loses its connection reconnects with
//! `Last-Event-ID` and gets what it missed from a bounded replay log.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::rpc::{Rejection, SERVER_ERROR};
use super::sse;

/// Events queued for one connection before the router waits for it.
const CONNECTION_EVENTS: usize = 32;

/// How long a client should wait before reconnecting (the SSE `retry`).
const RETRY: Duration = Duration::from_secs(1);

/// One message for a connection.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its SSE event id, on streams that can be resumed.
    pub id: Option<String>,
    /// The JSON-RPC message.
    pub line: Arc<str>,
    /// The response that ends the stream.
    pub last: bool,
}

/// The sending side of one attached connection.
#[derive(Debug, Clone)]
pub struct Connection {
    sender: mpsc::Sender<Item>,
    generation: u64,
}

impl Connection {
    /// Hands `item` over, waiting at most `patience` for room; false when
    /// the client is gone or too slow.
    pub async fn deliver(&self, item: Item, patience: Duration) -> bool {
        matches!(
            tokio::time::timeout(patience, self.sender.send(item)).await,
            Ok(Ok(()))
        )
    }
}

/// A stream's state.
#[derive(Debug)]
pub struct Stream {
    id: u64,
    /// False for a POST answered with plain JSON: only its response goes
    /// to it.
    pub sse: bool,
    log: VecDeque<(u64, Arc<str>, bool)>,
    log_bytes: usize,
    cap: usize,
    next_seq: u64,
    delivered: u64,
    connection: Option<Connection>,
    generations: u64,
    finished: bool,
}

impl Stream {
    /// A new stream `id`, keeping up to `cap` bytes for replay.
    pub fn new(id: u64, sse: bool, cap: usize) -> Stream {
        Stream {
            id,
            sse,
            log: VecDeque::new(),
            log_bytes: 0,
            cap,
            next_seq: 1,
            delivered: 0,
            connection: None,
            generations: 0,
            finished: false,
        }
    }

    /// True while a client's connection takes this stream's events.
    pub fn attached(&self) -> bool {
        self.connection.as_ref().is_some_and(|c| !c.sender.is_closed())
    }

    /// True once its response was pushed.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// True once its response reached a connection: nothing is left to
    /// replay.
    pub fn done(&self) -> bool {
        self.finished && self.delivered + 1 >= self.next_seq
    }

    /// True while an event waits for a connection to take it.
    pub fn undelivered(&self) -> bool {
        self.delivered + 1 < self.next_seq
    }

    /// Adds one message (`last`: the response that ends the stream) and
    /// returns the connection to deliver it to, if one is attached.
    pub fn push(&mut self, line: Arc<str>, last: bool) -> Option<(Connection, Item)> {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.finished |= last;
        self.log_bytes += line.len();
        self.log.push_back((seq, line.clone(), last));
        // The newest event always stays, however large: it may be the
        // response a reconnecting client waits for.
        while self.log_bytes > self.cap && self.log.len() > 1 {
            if let Some((_, old, _)) = self.log.pop_front() {
                self.log_bytes -= old.len();
                tracing::warn!(
                    stream = self.id,
                    "dropped an undelivered event past the replay bound"
                );
            }
        }
        let connection = self.connection.clone().filter(|c| !c.sender.is_closed())?;
        self.delivered = seq;
        Some((connection, self.item(seq, line, last)))
    }

    /// The delivery of event `seq` to `connection` succeeded or failed;
    /// a failed connection is let go (its events stay for replay), a
    /// finished stream lets go of its connection so that the client's
    /// SSE response ends.
    pub fn delivered(&mut self, connection: &Connection, seq_of: &Item, ok: bool) {
        let current = self
            .connection
            .as_ref()
            .is_some_and(|c| c.generation == connection.generation);
        if !ok {
            if let Some(seq) = seq_of.id.as_deref().and_then(seq_in) {
                self.delivered = self.delivered.min(seq.saturating_sub(1));
            }
            if current {
                self.connection = None;
            }
        } else if seq_of.last && current {
            self.connection = None;
        }
    }

    /// Attaches a new connection (replacing any other), replaying what
    /// came after `after` (the client's `Last-Event-ID`), or what no
    /// connection got yet. Returns the replay and the connection's feed,
    /// which is `None` when the replay already ends the stream.
    pub fn attach(&mut self, after: Option<u64>) -> (Vec<Item>, Option<mpsc::Receiver<Item>>) {
        let from = after.unwrap_or(self.delivered);
        let replay: Vec<Item> = self
            .log
            .iter()
            .filter(|(seq, _, _)| *seq > from)
            .map(|(seq, line, last)| self.item(*seq, line.clone(), *last))
            .collect();
        self.delivered = self.next_seq - 1;
        if replay.iter().any(|item| item.last) {
            self.connection = None;
            return (replay, None);
        }
        let (sender, receiver) = mpsc::channel(CONNECTION_EVENTS);
        self.generations += 1;
        self.connection = Some(Connection {
            sender,
            generation: self.generations,
        });
        (replay, Some(receiver))
    }

    /// The priming event's id, naming where the stream stands now: a
    /// client that got nothing else can still reconnect to this stream.
    pub fn priming_id(&self) -> String {
        format!("{}-{}", self.id, self.next_seq - 1)
    }

    fn item(&self, seq: u64, line: Arc<str>, last: bool) -> Item {
        Item {
            id: self.sse.then(|| format!("{}-{seq}", self.id)),
            line,
            last,
        }
    }
}

/// The stream and sequence number an event id names (`STREAM-SEQ`).
pub fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

fn seq_in(id: &str) -> Option<u64> {
    parse_event_id(id).map(|(_, seq)| seq)
}

/// An SSE response: an optional priming event, the replay, then what the
/// connection is fed, ending after the stream's last event, with a comment
/// whenever it has been idle for [`sse::KEEP_ALIVE`]. `guard` is dropped
/// when the client goes or the stream ends.
pub fn respond<G: Send + 'static>(
    priming: Option<String>,
    replay: Vec<Item>,
    feed: Option<mpsc::Receiver<Item>>,
    guard: G,
) -> Response {
    let priming = priming.map(|id| sse::priming(&id, RETRY));
    let ended = replay.iter().any(|item| item.last);
    let head = futures_util::stream::iter(priming.into_iter().chain(replay.into_iter().map(event)));
    let tail = futures_util::stream::unfold(
        (feed.filter(|_| !ended), Some(guard)),
        |(feed, guard)| async move {
            let mut feed = feed?;
            match tokio::time::timeout(sse::KEEP_ALIVE, feed.recv()).await {
                Err(_) => Some((Bytes::from_static(sse::COMMENT), (Some(feed), guard))),
                Ok(item) => {
                    let item = item?;
                    let next = if item.last { None } else { Some(feed) };
                    Some((event(item), (next, guard)))
                }
            }
        },
    );
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(head.chain(tail).map(Ok::<_, Infallible>)),
    )
        .into_response()
}

/// The answer to one POSTed request: an SSE stream, or (for a client
/// that takes no SSE) the response alone as JSON once it comes. `guard` is
/// dropped when the client goes or the answer is complete.
pub async fn answer<G: Send + 'static>(
    sse: bool,
    priming: Option<String>,
    mut feed: mpsc::Receiver<Item>,
    guard: G,
) -> Response {
    if sse {
        return respond(priming, Vec::new(), Some(feed), guard);
    }
    while let Some(item) = feed.recv().await {
        if item.last {
            drop(guard);
            return (
                [(header::CONTENT_TYPE, "application/json")],
                item.line.to_string(),
            )
                .into_response();
        }
    }
    Rejection::new(
        StatusCode::BAD_GATEWAY,
        SERVER_ERROR,
        "the MCP server ended before it answered",
    )
    .into_response()
}

fn event(item: Item) -> Bytes {
    sse::message(item.id.as_deref(), &item.line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reconnecting_client_gets_what_came_after_its_last_event() {
        let mut stream = Stream::new(7, true, 1024);
        assert!(stream.push("a".into(), false).is_none());
        let (replay, feed) = stream.attach(None);
        assert_eq!(
            replay.iter().map(|i| i.id.clone()).collect::<Vec<_>>(),
            [Some("7-1".to_owned())]
        );
        assert!(feed.is_some());
        drop(feed);
        stream.push("b".into(), false);
        stream.push("c".into(), true);
        let (replay, feed) = stream.attach(Some(1));
        let lines: Vec<&str> = replay.iter().map(|i| &*i.line).collect();
        assert_eq!(lines, ["b", "c"]);
        assert!(
            feed.is_none(),
            "the replay holds the response: nothing more to feed"
        );
        assert!(stream.done());
    }

    #[test]
    fn the_replay_log_is_bounded_but_keeps_the_newest() {
        let mut stream = Stream::new(1, true, 4);
        stream.push("aaa".into(), false);
        stream.push("bbbbbb".into(), true);
        let (replay, _) = stream.attach(None);
        let lines: Vec<&str> = replay.iter().map(|i| &*i.line).collect();
        assert_eq!(lines, ["bbbbbb"]);
    }

    #[test]
    fn event_ids_name_stream_and_sequence() {
        assert_eq!(parse_event_id("3-14"), Some((3, 14)));
        assert_eq!(parse_event_id("x-1"), None);
    }
}
