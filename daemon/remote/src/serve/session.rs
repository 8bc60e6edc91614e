//! One stateful session (2025 eras): its relay, and where each line the
//! relay writes for the host goes.
//!
//! * a response goes to the stream of the POST that carried its request;
//! * a progress notification goes to the stream of the request that
//!   asked for it;
//! * anything else (a server request the broker did not take, `roots/list`,
//!   a log message) goes to the GET stream when a client holds it open,
//!   else to the newest open POST stream, else waits on the GET stream
//!   (bounded) for a client to open it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use super::idle::Activity;
use super::pipe::{Pipe, Router};
use super::rpc::{self, Message, Rejection, SERVER_ERROR, SESSION_NOT_FOUND};
use super::settings::Limits;
use super::stream::{self, Connection, Item, Stream};

/// The GET stream's number; POST streams count from 1.
const GET_STREAM: u64 = 0;

/// One session.
#[derive(Debug)]
pub struct Session {
    /// Its `Mcp-Session-Id`.
    pub id: String,
    pipe: Pipe,
    routes: Arc<Routes>,
    /// Whether its streams are primed when a request names no revision:
    /// as the revision its `initialize` asked for.
    primed: std::sync::atomic::AtomicBool,
}

/// Where the session's lines go.
pub struct Routes {
    state: Mutex<State>,
    limits: Limits,
    on_end: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes").finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct State {
    streams: HashMap<u64, Stream>,
    /// Request id (its JSON text) → the stream waiting for its response.
    waiting: HashMap<String, u64>,
    /// Progress token (its JSON text) → the stream of the request.
    progress: HashMap<String, u64>,
    next_stream: u64,
    ended: bool,
    /// The last request, or the end of the last connection.
    last: Instant,
    /// Client connections open now (POST streams, the GET stream, and
    /// POSTs waiting for their JSON answer).
    connections: usize,
}

/// As much of a line as routing needs.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<EnvelopeParams>,
}

#[derive(Deserialize)]
struct EnvelopeParams {
    #[serde(default, rename = "progressToken")]
    progress_token: Option<Value>,
}

impl Routes {
    /// Routes for a new session; `on_end` runs once its relay has ended.
    pub fn new(limits: Limits, on_end: Box<dyn Fn() + Send + Sync>) -> Arc<Routes> {
        let mut state = State {
            streams: HashMap::new(),
            waiting: HashMap::new(),
            progress: HashMap::new(),
            next_stream: GET_STREAM + 1,
            ended: false,
            last: Instant::now(),
            connections: 0,
        };
        state
            .streams
            .insert(GET_STREAM, Stream::new(GET_STREAM, true, limits.replay_bytes));
        Arc::new(Routes {
            state: Mutex::new(state),
            limits,
            on_end,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not take every later request down with it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What the idle clock needs to know.
    pub fn activity(&self) -> Activity {
        let state = self.lock();
        Activity {
            last: state.last,
            connections: state.connections,
            pending: state.pending(),
        }
    }

    /// A client did something: the idle clock starts again.
    fn touch(&self) {
        self.lock().last = Instant::now();
    }

    /// Counts a client connection until the returned guard is dropped.
    fn connect(self: &Arc<Self>, state: &mut State) -> Attached {
        state.connections += 1;
        state.last = Instant::now();
        Attached(self.clone())
    }

    /// Hands one event to its connection and records how that went.
    async fn deliver(&self, stream: u64, connection: Connection, item: Item) {
        let ok = connection.deliver(item.clone(), self.limits.slow_client).await;
        let mut state = self.lock();
        if let Some(target) = state.streams.get_mut(&stream) {
            target.delivered(&connection, &item, ok);
        }
        state.forget_if_done(stream);
    }
}

/// One open client connection; its end restarts the idle clock.
struct Attached(Arc<Routes>);

impl Drop for Attached {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.connections = state.connections.saturating_sub(1);
        state.last = Instant::now();
    }
}

impl State {
    /// Something waits for a client to take it: a response not yet
    /// given, or an event no connection got.
    fn pending(&self) -> bool {
        !self.waiting.is_empty() || self.streams.values().any(Stream::undelivered)
    }

    /// Which stream a line from the relay goes to, and whether it is the
    /// response that ends it.
    fn target(&mut self, envelope: &Envelope) -> (u64, bool) {
        let is_response = envelope.method.is_none();
        if is_response
            && let Some(id) = &envelope.id
            && let Some(stream) = self.waiting.remove(&rpc::id_key(id))
        {
            self.progress.retain(|_, s| *s != stream);
            return (stream, true);
        }
        if envelope.method.as_deref() == Some("notifications/progress")
            && let Some(token) = envelope.params.as_ref().and_then(|p| p.progress_token.as_ref())
            && let Some(&stream) = self.progress.get(&rpc::id_key(token))
            && self.streams.get(&stream).is_some_and(|s| s.sse)
        {
            return (stream, false);
        }
        (self.unsolicited(), false)
    }

    /// The stream for a message tied to no request.
    fn unsolicited(&self) -> u64 {
        if self.streams.get(&GET_STREAM).is_some_and(Stream::attached) {
            return GET_STREAM;
        }
        self.streams
            .iter()
            .filter(|(id, s)| **id != GET_STREAM && s.sse && s.attached() && !s.finished())
            .map(|(id, _)| *id)
            .max()
            .unwrap_or(GET_STREAM)
    }

    /// Drops a POST stream with nothing left to give.
    fn forget_if_done(&mut self, stream: u64) {
        if stream != GET_STREAM
            && self
                .streams
                .get(&stream)
                .is_some_and(|s| s.done() || (!s.sse && s.finished()))
        {
            self.streams.remove(&stream);
        }
    }

    /// Room for one more POST stream: streams whose response waits for a
    /// reconnection that may never come are the first to go.
    fn make_room(&mut self, max: usize) -> bool {
        while self.streams.len() > max {
            let oldest_finished = self
                .streams
                .iter()
                .filter(|(id, s)| **id != GET_STREAM && s.finished())
                .map(|(id, _)| *id)
                .min();
            match oldest_finished {
                Some(id) => {
                    self.streams.remove(&id);
                }
                None => return false,
            }
        }
        true
    }
}

impl Router for Routes {
    async fn line(&self, line: Vec<u8>) {
        let envelope = serde_json::from_slice::<Envelope>(&line).unwrap_or(Envelope {
            id: None,
            method: None,
            params: None,
        });
        let text: Arc<str> = String::from_utf8_lossy(&line).into();
        let delivery = {
            let mut state = self.lock();
            let (stream, last) = state.target(&envelope);
            let delivery = state
                .streams
                .get_mut(&stream)
                .and_then(|target| target.push(text, last));
            state.forget_if_done(stream);
            delivery.map(|(connection, item)| (stream, connection, item))
        };
        if let Some((stream, connection, item)) = delivery {
            self.deliver(stream, connection, item).await;
        }
    }

    async fn ended(&self) {
        let deliveries: Vec<(u64, Connection, Item)> = {
            let mut state = self.lock();
            state.ended = true;
            let waiting: Vec<(String, u64)> = state.waiting.drain().collect();
            waiting
                .into_iter()
                .filter_map(|(key, stream)| {
                    let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
                    let line = rpc::error_line(&id, SERVER_ERROR, "the MCP server ended before it answered");
                    let target = state.streams.get_mut(&stream)?;
                    target.push(line.into(), true).map(|(c, i)| (stream, c, i))
                })
                .collect()
        };
        for (stream, connection, item) in deliveries {
            self.deliver(stream, connection, item).await;
        }
        // Every connection goes: the GET stream's client sees its
        // response end, as when a server closes its stream.
        self.lock().streams.clear();
        (self.on_end)();
    }
}

impl Session {
    /// A session of `id` over a started relay.
    pub fn new(id: String, pipe: Pipe, routes: Arc<Routes>) -> Session {
        Session {
            id,
            pipe,
            routes,
            primed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Remembers whether the revision `initialize` asked for primes streams.
    pub fn set_primed(&self, primed: bool) {
        self.primed.store(primed, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether its streams are primed when a request names no revision.
    pub fn primed(&self) -> bool {
        self.primed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Relays a request; the answer is an SSE stream (`sse`, opened with
    /// the priming event when `prime`) or the JSON response.
    pub async fn request(&self, message: Message, sse: bool, prime: bool) -> Result<Response, Rejection> {
        let id = message.id().cloned().unwrap_or(Value::Null);
        let key = rpc::id_key(&id);
        let (stream, priming, feed, attached) = {
            let mut state = self.routes.lock();
            if state.ended {
                return Err(gone(&self.id));
            }
            if state.waiting.contains_key(&key) {
                return Err(Rejection::bad_request(format!(
                    "request id {key} is already waiting for its response in this session"
                ))
                .for_id(Some(&id)));
            }
            if !state.make_room(self.routes.limits.max_streams) {
                return Err(busy(&id));
            }
            let stream = state.next_stream;
            state.next_stream += 1;
            let mut target = Stream::new(stream, sse, self.routes.limits.replay_bytes);
            let priming = target.priming_id();
            let (_, feed) = target.attach(None);
            state.streams.insert(stream, target);
            state.waiting.insert(key.clone(), stream);
            if let Some(token) = message.progress_token() {
                state.progress.insert(rpc::id_key(token), stream);
            }
            let attached = self.routes.connect(&mut state);
            (stream, priming, feed, attached)
        };
        let Some(feed) = feed else {
            return Err(gone(&self.id));
        };
        if !self.pipe.send(message.into_line()).await {
            let mut state = self.routes.lock();
            state.waiting.remove(&key);
            state.streams.remove(&stream);
            return Err(gone(&self.id));
        }
        Ok(stream::answer(sse, (sse && prime).then_some(priming), feed, attached).await)
    }

    /// Relays a notification or a response (to a server request).
    pub async fn pass(&self, message: Message) -> Result<(), Rejection> {
        self.routes.touch();
        if self.routes.lock().ended || !self.pipe.send(message.into_line()).await {
            return Err(gone(&self.id));
        }
        Ok(())
    }

    /// Opens the GET stream (with the priming event when `prime`), or
    /// resumes the stream `Last-Event-ID` names.
    pub fn open(&self, last_event_id: Option<&str>, prime: bool) -> Result<Response, Rejection> {
        let mut state = self.routes.lock();
        if state.ended {
            return Err(gone(&self.id));
        }
        if let Some((stream, seq)) = last_event_id.and_then(stream::parse_event_id)
            && let Some(target) = state.streams.get_mut(&stream)
        {
            let (replay, feed) = target.attach(Some(seq));
            let attached = self.routes.connect(&mut state);
            return Ok(stream::respond(None, replay, feed, attached));
        }
        let Some(get) = state.streams.get_mut(&GET_STREAM) else {
            return Err(gone(&self.id));
        };
        if get.attached() {
            return Err(Rejection::new(
                StatusCode::CONFLICT,
                SERVER_ERROR,
                "this session's GET stream is already open (one at a time)",
            ));
        }
        let priming = prime.then(|| get.priming_id());
        let (replay, feed) = get.attach(None);
        let attached = self.routes.connect(&mut state);
        Ok(stream::respond(priming, replay, feed, attached))
    }

    /// What the idle clock needs to know of this session: a form waiting
    /// for the user counts as waiting for the client too, since its answer
    /// leads to a response or a server request only the host can take
    /// (the host's call may have been answered already: a task, or a
    /// server that asks in the background).
    pub fn activity(&self) -> Activity {
        let mut activity = self.routes.activity();
        activity.pending |= self.pipe.asking();
        activity
    }

    /// Ends the session (DELETE, or idle): the relay sees its host leave and ends
    /// the server in order.
    pub fn close(&self) {
        self.routes.lock().ended = true;
        self.pipe.stop();
    }
}

/// The session ended or was never there.
pub fn gone(id: &str) -> Rejection {
    Rejection::new(
        StatusCode::NOT_FOUND,
        SESSION_NOT_FOUND,
        format!("session {id:?} does not exist (it ended, or the server restarted): initialize a new one"),
    )
}

fn busy(id: &Value) -> Rejection {
    Rejection::new(
        StatusCode::SERVICE_UNAVAILABLE,
        SERVER_ERROR,
        "too many requests in flight in this session: wait for some to be answered",
    )
    .for_id(Some(id))
}
