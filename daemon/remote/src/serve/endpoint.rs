//! One endpoint: its upstream, its sessions, and its shared stateless
//! relay.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use axum::http::StatusCode;
use elicit_proxy::Options;
use tokio_util::task::TaskTracker;

use super::pipe::Pipe;
use super::rpc::{Rejection, SERVER_ERROR};
use super::session::{self, Session};
use super::settings::{Limits, Upstream};
use super::stateless::{self, Shared};
use super::token::random_hex;

/// One endpoint's state.
#[derive(Debug)]
pub struct Endpoint {
    /// What it fronts.
    pub upstream: Upstream,
    options: Options,
    limits: Limits,
    tracker: TaskTracker,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    shared: Mutex<Option<Arc<Shared>>>,
}

impl Endpoint {
    /// An endpoint in front of `upstream`; relays run as `options` say,
    /// their tasks tracked by `tracker`.
    pub fn new(upstream: Upstream, options: Options, limits: Limits, tracker: TaskTracker) -> Arc<Endpoint> {
        Arc::new(Endpoint {
            upstream,
            options,
            limits,
            tracker,
            sessions: Mutex::new(HashMap::new()),
            shared: Mutex::new(None),
        })
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The session `id`, if it is open.
    pub fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions().get(id).cloned()
    }

    /// Starts a session: a relay of its own (for a command, a process of
    /// its own).
    pub fn create_session(self: &Arc<Self>) -> Result<Arc<Session>, Rejection> {
        if self.sessions().len() >= self.limits.max_sessions {
            return Err(Rejection::new(
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_ERROR,
                format!(
                    "{} sessions are open, the most this server keeps: end one (DELETE) first",
                    self.limits.max_sessions
                ),
            ));
        }
        let id = random_hex(16);
        let endpoint = Arc::downgrade(self);
        let key = id.clone();
        let routes = session::Routes::new(
            self.limits.clone(),
            Box::new(move || {
                if let Some(endpoint) = Weak::upgrade(&endpoint) {
                    endpoint.sessions().remove(&key);
                }
            }),
        );
        let pipe = Pipe::start(&self.upstream, &self.options, routes.clone(), &self.tracker)
            .map_err(cannot_start)?;
        let session = Arc::new(Session::new(id.clone(), pipe, routes));
        self.sessions().insert(id, session.clone());
        Ok(session)
    }

    /// Ends session `id` (DELETE); false when there is none.
    pub fn end_session(&self, id: &str) -> bool {
        let session = self.sessions().remove(id);
        session.map(|s| s.close()).is_some()
    }

    /// The shared relay for stateless requests, started on first use and
    /// again after it ended.
    pub fn shared(self: &Arc<Self>) -> Result<Arc<Shared>, Rejection> {
        let mut slot = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(shared) = slot.as_ref().filter(|s| !s.ended()) {
            return Ok(shared.clone());
        }
        let routes = stateless::Routes::new(self.limits.clone(), Box::new(|| {}));
        let pipe = Pipe::start(&self.upstream, &self.options, routes.clone(), &self.tracker)
            .map_err(cannot_start)?;
        let shared = Arc::new(Shared::new(pipe, routes));
        *slot = Some(shared.clone());
        Ok(shared)
    }

    /// Ends every relay (shutdown).
    pub fn stop_all(&self) {
        let sessions: Vec<Arc<Session>> = self.sessions().drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.close();
        }
        let shared = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(shared) = shared {
            shared.stop();
        }
    }
}

fn cannot_start(error: super::ServeError) -> Rejection {
    Rejection::new(
        StatusCode::BAD_GATEWAY,
        SERVER_ERROR,
        format!("cannot start the MCP server: {error}"),
    )
}
