//! 2026-07-28 (stateless) requests: one relay per upstream, shared by
//! every client. Each request's id becomes one of the relay's own
//! (`elicit-serve-N`), so that two clients using the same id cannot
//! collide, and goes back to the client's id in the response; progress
//! tokens are rewritten the same way. A client that goes away before its
//! answer cancels its request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::pipe::{Pipe, Router};
use super::rpc::{self, Message, Rejection, SERVER_ERROR};
use super::settings::Limits;
use super::stream::{self, Item};

/// Events queued for one request's client.
const CONNECTION_EVENTS: usize = 32;

/// JSON-RPC: method not found, for a server request nobody can answer.
const METHOD_NOT_FOUND: i64 = -32601;

/// The shared relay of one endpoint.
#[derive(Debug)]
pub struct Shared {
    pipe: Pipe,
    routes: Arc<Routes>,
}

/// Where the shared relay's lines go.
pub struct Routes {
    state: Mutex<State>,
    limits: Limits,
    /// Answers the relay's own requests; weak, so that it does not keep
    /// the relay's input open.
    input: OnceLock<mpsc::WeakSender<Bytes>>,
    on_end: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes").finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    /// The relay's id (JSON text) → the client waiting for it.
    pending: HashMap<String, Pending>,
    /// The relay's progress token → the relay's id of its request.
    progress: HashMap<String, String>,
    ended: bool,
}

#[derive(Debug)]
struct Pending {
    id: Value,
    token: Option<Value>,
    feed: mpsc::Sender<Item>,
}

impl Routes {
    /// Routes for a new shared relay; `on_end` runs once it has ended.
    pub fn new(limits: Limits, on_end: Box<dyn Fn() + Send + Sync>) -> Arc<Routes> {
        Arc::new(Routes {
            state: Mutex::new(State::default()),
            limits,
            input: OnceLock::new(),
            on_end,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `message` to the relay without waiting; dropped when the
    /// relay's input is full or gone.
    fn tell_relay(&self, message: &Value) {
        if let Some(input) = self.input.get().and_then(mpsc::WeakSender::upgrade) {
            let mut line = message.to_string().into_bytes();
            line.push(b'\n');
            let _ = input.try_send(Bytes::from(line));
        }
    }
}

impl Router for Routes {
    async fn line(&self, line: Vec<u8>) {
        let Ok(mut message) = serde_json::from_slice::<Value>(&line) else {
            tracing::warn!("a line from the shared relay is not JSON; dropped");
            return;
        };
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = message.get("id").cloned();
        let delivery = {
            let mut state = self.lock();
            match (method.as_deref(), id) {
                (None, Some(id)) => {
                    let key = rpc::id_key(&id);
                    state.pending.remove(&key).map(|pending| {
                        state.progress.retain(|_, owner| owner != &key);
                        message["id"] = pending.id;
                        (pending.feed, true)
                    })
                }
                (Some("notifications/progress"), None) => {
                    let token = message.pointer("/params/progressToken").map(rpc::id_key);
                    let owner = token.and_then(|token| state.progress.get(&token).cloned());
                    owner.and_then(|owner| state.pending.get(&owner)).map(|pending| {
                        if let (Some(params), Some(token)) = (message.get_mut("params"), &pending.token) {
                            params["progressToken"] = token.clone();
                        }
                        (pending.feed.clone(), false)
                    })
                }
                (Some(method), Some(id)) => {
                    // 2026-07-28 servers send no requests; one that does
                    // must not wait for ever.
                    drop(state);
                    self.tell_relay(&json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": METHOD_NOT_FOUND,
                        "message": format!("{method}: a stateless (2026-07-28) client of elicit serve takes no server requests"),
                    }}));
                    return;
                }
                _ => None,
            }
        };
        if let Some((feed, last)) = delivery {
            let item = Item {
                id: None,
                line: message.to_string().into(),
                last,
            };
            let _ = tokio::time::timeout(self.limits.slow_client, feed.send(item)).await;
        }
    }

    async fn ended(&self) {
        let pending: Vec<Pending> = {
            let mut state = self.lock();
            state.ended = true;
            state.progress.clear();
            state.pending.drain().map(|(_, p)| p).collect()
        };
        for waiting in pending {
            let line = rpc::error_line(
                &waiting.id,
                SERVER_ERROR,
                "the MCP server ended before it answered",
            );
            let _ = waiting.feed.try_send(Item {
                id: None,
                line: line.into(),
                last: true,
            });
        }
        (self.on_end)();
    }
}

/// Cancels a request whose client left before its answer.
struct Cancel {
    routes: Arc<Routes>,
    key: String,
    relay_id: Value,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        let still_pending = {
            let mut state = self.routes.lock();
            let pending = state.pending.remove(&self.key).is_some();
            let key = &self.key;
            state.progress.retain(|_, owner| owner != key);
            pending
        };
        if still_pending {
            self.routes
                .tell_relay(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": self.relay_id, "reason": "the HTTP client went away"}}));
        }
    }
}

impl Shared {
    /// A shared relay over a started pipe.
    pub fn new(pipe: Pipe, routes: Arc<Routes>) -> Shared {
        let _ = routes.input.set(pipe.weak_input());
        Shared { pipe, routes }
    }

    /// True once the relay ended: the next request starts another.
    pub fn ended(&self) -> bool {
        self.routes.lock().ended
    }

    /// Relays one request under an id of the relay's own.
    pub async fn request(&self, mut message: Message, sse: bool) -> Result<Response, Rejection> {
        let id = message.id().cloned().unwrap_or(Value::Null);
        let (feed, cancel) = {
            let mut state = self.routes.lock();
            if state.ended || state.pending.len() >= self.routes.limits.max_streams {
                return Err(Rejection::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    SERVER_ERROR,
                    "too many requests in flight: wait for some to be answered",
                )
                .for_id(Some(&id)));
            }
            state.next += 1;
            let relay_id = Value::String(format!("elicit-serve-{}", state.next));
            let key = rpc::id_key(&relay_id);
            message.value["id"] = relay_id.clone();
            let token = message.progress_token().cloned();
            if token.is_some()
                && let Some(meta) = message.value.pointer_mut("/params/_meta")
            {
                meta["progressToken"] = relay_id.clone();
                state.progress.insert(key.clone(), key.clone());
            }
            let (sender, feed) = mpsc::channel(CONNECTION_EVENTS);
            state.pending.insert(
                key.clone(),
                Pending {
                    id: id.clone(),
                    token,
                    feed: sender,
                },
            );
            let cancel = Cancel {
                routes: self.routes.clone(),
                key,
                relay_id,
            };
            (feed, cancel)
        };
        if !self.pipe.send(message.into_line()).await {
            return Err(Rejection::new(
                StatusCode::BAD_GATEWAY,
                SERVER_ERROR,
                "the MCP server has ended; send the request again",
            )
            .for_id(Some(&id)));
        }
        Ok(stream::answer(sse, None, feed, cancel).await)
    }

    /// Ends the relay (shutdown).
    pub fn stop(&self) {
        self.pipe.stop();
    }
}
