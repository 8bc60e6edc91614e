//! `elicit serve`: a loopback Streamable HTTP endpoint in front of an
//! upstream MCP server (a URL or a stdio command), with the same
//! brokering as `elicit proxy`: each session runs a relay of
//! `elicit-proxy` whose host end is fed by HTTP.
//!
//! * [`settings`] — what is served and where, and the bounds;
//! * [`budget`] — the bytes of request bodies held at once;
//! * [`config`] — `--config FILE`, several upstreams under named paths;
//! * [`token`] — the optional bearer token and its file;
//! * [`guard`] — Host and Origin (DNS rebinding) and the token, checked
//!   before anything else;
//! * [`rpc`] — JSON-RPC messages and error bodies;
//! * [`http`] — POST, GET and DELETE;
//! * [`endpoint`] — one upstream's sessions and shared relay;
//! * [`session`] — a stateful (2025-era) session and its routing;
//! * [`idle`] — when a session whose host left without a word ends;
//! * [`stateless`] — 2026-07-28 requests through one shared relay;
//! * [`stream`] — SSE streams with event ids and a bounded replay;
//! * [`pipe`] — a relay whose host end is in this process;
//! * [`upstream`] — the server end of a relay.

pub mod budget;
pub mod config;
pub mod endpoint;
mod error;
pub mod guard;
pub mod http;
pub mod idle;
pub mod pipe;
pub mod rpc;
pub mod session;
pub mod settings;
mod sse;
pub mod stateless;
pub mod stream;
pub mod token;
pub mod upstream;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::post;
use tokio_util::task::TaskTracker;

pub use error::ServeError;
pub use settings::{Endpoint as EndpointSettings, Limits, Settings, Token, Upstream};

use budget::Budget;
use endpoint::Endpoint;
use guard::Guard;
use token::Bearer;

/// How long shutdown waits past the relays' own grace periods.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(2);

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Bound {
    listener: tokio::net::TcpListener,
    address: SocketAddr,
    urls: Vec<String>,
    token_file: Option<PathBuf>,
    router: Router,
    endpoints: Vec<Arc<Endpoint>>,
    tracker: TaskTracker,
    grace: Duration,
}

/// Checks `settings`, binds the loopback address and prepares the
/// endpoints (nothing is started before the first request).
pub async fn bind(settings: Settings) -> Result<Bound, ServeError> {
    settings.check()?;
    let (bearer, token_file) = Bearer::load(&settings.token)?;
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|source| ServeError::Bind {
            address: settings.listen,
            source,
        })?;
    let address = listener.local_addr().map_err(|source| ServeError::Bind {
        address: settings.listen,
        source,
    })?;
    let tracker = TaskTracker::new();
    let mut router = Router::new();
    let mut endpoints = Vec::new();
    let mut urls = Vec::new();
    let budget = Budget::new(
        settings.limits.max_bodies,
        settings.limits.max_body,
        settings.limits.body_wait,
    );
    for served in &settings.endpoints {
        let endpoint = Endpoint::new(
            served.upstream.clone(),
            settings.proxy.clone(),
            settings.limits.clone(),
            budget.clone(),
            tracker.clone(),
        );
        router = router.route(
            &served.path,
            post(http::post)
                .get(http::get)
                .delete(http::delete)
                .with_state(endpoint.clone()),
        );
        endpoints.push(endpoint);
        urls.push(format!("http://{address}{}", served.path));
    }
    let guard = Arc::new(Guard {
        port: address.port(),
        bearer,
    });
    // Bodies are read within the budget by the POST handler, which
    // enforces the per-body limit too.
    let router = router.layer(axum::middleware::from_fn_with_state(guard, guard::check));
    Ok(Bound {
        listener,
        address,
        urls,
        token_file,
        router,
        endpoints,
        tracker,
        grace: settings.proxy.exit_grace,
    })
}

impl Bound {
    /// The bound address (the port chosen when 0 was asked for).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Each endpoint's URL.
    pub fn urls(&self) -> &[String] {
        &self.urls
    }

    /// Where a token made for this run was written.
    pub fn token_file(&self) -> Option<&std::path::Path> {
        self.token_file.as_deref()
    }

    /// Serves until `shutdown` resolves; then ends every relay (each
    /// server gets its grace period) and returns once they have ended.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServeError> {
        let Bound {
            listener,
            router,
            endpoints,
            tracker,
            grace,
            ..
        } = self;
        let stopping = endpoints.clone();
        let served = axum::serve(listener, router).with_graceful_shutdown(async move {
            shutdown.await;
            // Ending the relays ends their sessions' streams, so that
            // the graceful shutdown does not wait on open SSE responses.
            for endpoint in &stopping {
                endpoint.stop_all();
            }
        });
        let outcome = served.await.map_err(ServeError::Http);
        for endpoint in &endpoints {
            endpoint.stop_all();
        }
        tracker.close();
        // Closing, then TERM, then KILL: each step has the grace period.
        if tokio::time::timeout(grace * 3 + SHUTDOWN_SLACK, tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("some relays did not end in time");
        }
        outcome
    }
}
