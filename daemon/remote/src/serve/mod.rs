//! `elicit serve`: a loopback Streamable HTTP endpoint in front of an
//! upstream MCP server (a URL or a stdio command), with the same
//! brokering as `elicit proxy`: each session runs a relay of
//! `elicit-proxy` whose host end is fed by HTTP.
//!
//! * [`settings`] — what is served and where, and the bounds;
//! * [`listen`] — loopback TCP or a Unix socket, and who each connection
//!   is from;
//! * [`peer`] — the uid owning a connection's client end, from the kernel;
//! * [`budget`] — the bytes of request bodies held at once;
//! * [`config`] — `--config FILE`, several upstreams under named paths;
//! * [`token`] — the optional bearer token and its file;
//! * [`guard`] — the client's uid (this user's only), Host and Origin (DNS
//!   rebinding) and the token, checked before anything else;
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
pub mod listen;
pub mod peer;
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
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::post;
use tokio_util::task::TaskTracker;

pub use error::ServeError;
pub use listen::Listen;
pub use settings::{Endpoint as EndpointSettings, Limits, Settings, Token, Upstream};

use budget::Budget;
use endpoint::Endpoint;
use guard::Guard;
use listen::{Incoming, Peer};
use token::Bearer;

/// How long shutdown waits past the relays' own grace periods.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(2);

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Bound {
    listener: Incoming,
    urls: Vec<String>,
    paths: Vec<String>,
    token_file: Option<PathBuf>,
    router: Router,
    endpoints: Vec<Arc<Endpoint>>,
    tracker: TaskTracker,
    grace: Duration,
}

/// Checks `settings`, binds the loopback address or Unix socket and
/// prepares the endpoints (nothing is started before the first request).
pub async fn bind(settings: Settings) -> Result<Bound, ServeError> {
    settings.check()?;
    let (bearer, token_file) = Bearer::load(&settings.token)?;
    let listener = Incoming::bind(&settings.listen, bearer.is_required()).await?;
    let base = match (listener.tcp_address(), listener.unix_path()) {
        (Some(address), _) => format!("http://{address}"),
        // The convention of Docker's and Python's clients: the socket's
        // path, percent-encoded, as the host.
        (None, Some(path)) => format!("http+unix://{}", encode_path(path)),
        (None, None) => String::new(),
    };
    let tracker = TaskTracker::new();
    let mut router = Router::new();
    let mut endpoints = Vec::new();
    let mut urls = Vec::new();
    let mut paths = Vec::new();
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
        urls.push(format!("{base}{}", served.path));
        paths.push(served.path.clone());
    }
    let guard = Arc::new(Guard::new(
        listener.tcp_address().map(|address| address.port()),
        bearer,
        peer::own_uid(),
    ));
    // Bodies are read within the budget by the POST handler, which
    // enforces the per-body limit too.
    let router = router.layer(axum::middleware::from_fn_with_state(guard, guard::check));
    Ok(Bound {
        listener,
        urls,
        paths,
        token_file,
        router,
        endpoints,
        tracker,
        grace: settings.proxy.exit_grace,
    })
}

impl Bound {
    /// The bound TCP address (the port chosen when 0 was asked for), if
    /// it listens on TCP.
    pub fn tcp_address(&self) -> Option<std::net::SocketAddr> {
        self.listener.tcp_address()
    }

    /// The Unix socket listened on, if any.
    pub fn unix_path(&self) -> Option<&std::path::Path> {
        self.listener.unix_path()
    }

    /// Each endpoint's URL.
    pub fn urls(&self) -> &[String] {
        &self.urls
    }

    /// Each endpoint's path (`/mcp`, `/NAME/mcp`).
    pub fn paths(&self) -> &[String] {
        &self.paths
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
        // Each connection carries its owner, which the guard checks.
        let served = axum::serve(listener, router.into_make_service_with_connect_info::<Peer>())
            .with_graceful_shutdown(async move {
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

/// A path as one URL host: every byte but letters, digits, `-`, `.`, `_`
/// and `~` percent-encoded.
fn encode_path(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str()
        .as_bytes()
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_socket_path_is_one_host() {
        assert_eq!(
            super::encode_path(std::path::Path::new("/run/user/1000/serve.sock")),
            "%2Frun%2Fuser%2F1000%2Fserve.sock"
        );
    }
}
