//! One endpoint: its upstream, its sessions, and its shared stateless
//! relay.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use axum::http::StatusCode;
use elicit_proxy::Options;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::budget::Budget;
use super::idle;
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
    /// The bytes of bodies held at once, shared with the other endpoints.
    pub budget: Budget,
    tracker: TaskTracker,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    shared: Mutex<Option<Arc<Shared>>>,
    /// Stops the idle sessions' reaper.
    stopping: CancellationToken,
}

impl Endpoint {
    /// An endpoint in front of `upstream`; relays run as `options` say,
    /// their tasks tracked by `tracker`, bodies read within `budget`. Starts the task that ends idle
    /// sessions (so it needs a Tokio runtime), until [`Endpoint::stop_all`].
    pub fn new(
        upstream: Upstream,
        options: Options,
        limits: Limits,
        budget: Budget,
        tracker: TaskTracker,
    ) -> Arc<Endpoint> {
        let endpoint = Arc::new(Endpoint {
            upstream,
            options,
            limits,
            budget,
            tracker,
            sessions: Mutex::new(HashMap::new()),
            shared: Mutex::new(None),
            stopping: CancellationToken::new(),
        });
        let weak = Arc::downgrade(&endpoint);
        let stopping = endpoint.stopping.clone();
        let tick = endpoint.limits.idle.tick();
        endpoint.tracker.spawn(async move {
            let mut ticks = tokio::time::interval(tick);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stopping.cancelled() => break,
                    _ = ticks.tick() => {}
                }
                let Some(endpoint) = weak.upgrade() else { break };
                endpoint.end_idle(Instant::now());
            }
        });
        endpoint
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
        self.make_room()?;
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

    /// Room for one more session: a full table loses its longest-idle
    /// session without a client connected; refused when every session has
    /// one (they are all in use).
    fn make_room(&self) -> Result<(), Rejection> {
        let victim = {
            let sessions = self.sessions();
            if sessions.len() < self.limits.max_sessions.max(1) {
                return Ok(());
            }
            idle::evictee(sessions.iter().map(|(id, s)| (id.clone(), s.activity())))
        };
        let Some(victim) = victim else {
            return Err(Rejection::new(
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_ERROR,
                format!(
                    "{} sessions are open, the most this server keeps, and each has a client \
                     connected: end one (DELETE) first",
                    self.limits.max_sessions
                ),
            ));
        };
        tracing::info!(
            session = %victim,
            max = self.limits.max_sessions,
            "the session table is full: ending the longest-idle session"
        );
        self.end_session(&victim);
        Ok(())
    }

    /// Ends every session whose host has been gone too long at `now`
    /// (see [`idle`]).
    pub fn end_idle(&self, now: Instant) {
        let rules = self.limits.idle;
        let expired: Vec<(String, idle::Activity)> = self
            .sessions()
            .iter()
            .map(|(id, session)| (id.clone(), session.activity()))
            .filter(|(_, activity)| rules.expired(activity, now))
            .collect();
        for (id, activity) in expired {
            tracing::info!(
                session = %id,
                idle_ms = now.saturating_duration_since(activity.last).as_millis() as u64,
                pending = activity.pending,
                "no client for this session: ending it and its server"
            );
            self.end_session(&id);
        }
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
        self.stopping.cancel();
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
