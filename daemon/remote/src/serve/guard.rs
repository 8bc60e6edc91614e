//! What every request passes before it reaches an endpoint: the client's
//! uid (only this process's own user is served; other local users reach
//! loopback too), the `Host` and `Origin` checks against DNS rebinding (a
//! web page whose name an attacker re-points at 127.0.0.1 reaches
//! loopback with its own Host and Origin), then the bearer token.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::listen::{Owner, Peer};
use super::rpc::{Rejection, SERVER_ERROR};
use super::token::Bearer;

/// What the guard checks against.
#[derive(Debug)]
pub struct Guard {
    /// The TCP port the server is bound to; `None` on a Unix socket,
    /// which no web page reaches, so that any port in `Host` will do.
    pub port: Option<u16>,
    /// The token, if one is required.
    pub bearer: Bearer,
    /// The one uid served: this process's.
    pub own_uid: u32,
    /// The uids refused so far, each logged once.
    pub refused: Mutex<HashSet<u32>>,
}

impl Guard {
    /// A guard for a server on `port` (`None`: a Unix socket).
    pub fn new(port: Option<u16>, bearer: Bearer, own_uid: u32) -> Guard {
        Guard {
            port,
            bearer,
            own_uid,
            refused: Mutex::new(HashSet::new()),
        }
    }
}

/// Whether a connection's owner may be served by `own`: `Err` says why not.
pub fn owner_admitted(owner: &Owner, own: u32) -> Result<(), String> {
    match owner {
        Owner::Uid(uid) if *uid == own => Ok(()),
        Owner::Uid(uid) => Err(format!(
            "this server admits only the user it runs as (uid {own}); this connection is from uid {uid}"
        )),
        Owner::Unknown(why) => Err(format!(
            "this server admits only the user it runs as (uid {own}), and cannot tell who this connection is from: {why}"
        )),
        Owner::Unchecked => Ok(()),
    }
}

/// The loopback names a client may use for this server.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The middleware: refuses with 403 (Host, Origin) or 401 (token).
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Err(rejection) = guard.admit(&request) {
        return rejection.into_response();
    }
    next.run(request).await
}

impl Guard {
    fn admit(&self, request: &Request) -> Result<(), Rejection> {
        let forbidden = |message: String| Rejection::new(StatusCode::FORBIDDEN, SERVER_ERROR, message);
        // Every connection comes with its owner; one without is refused
        // rather than taken for ours.
        let owner = request
            .extensions()
            .get::<ConnectInfo<Peer>>()
            .map(|info| info.0.owner.clone())
            .unwrap_or_else(|| Owner::Unknown("no peer information".into()));
        if let Err(why) = owner_admitted(&owner, self.own_uid) {
            self.log_refusal(&owner, &why);
            return Err(forbidden(why));
        }
        let host = request
            .headers()
            .get(header::HOST)
            .ok_or_else(|| forbidden("the request has no Host header".into()))?;
        if !self.is_own_host(host) {
            return Err(forbidden(format!(
                "Host header {} is not this server (expected 127.0.0.1:{port}, localhost:{port} or [::1]:{port})",
                shown(host),
                port = self.port_shown()
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN)
            && !self.is_own_origin(origin)
        {
            return Err(forbidden(format!(
                "Origin header {} is not allowed (only http://localhost:{port}, http://127.0.0.1:{port} \
                 or http://[::1]:{port}): a web page may not reach this server",
                shown(origin),
                port = self.port_shown()
            )));
        }
        let authorization = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes);
        if !self.bearer.admits(authorization) {
            let message = if authorization.is_some() {
                "the Authorization header does not carry this server's bearer token"
            } else {
                "this server requires an Authorization: Bearer token (see its token file)"
            };
            return Err(Rejection::new(StatusCode::UNAUTHORIZED, SERVER_ERROR, message)
                .header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
        }
        Ok(())
    }

    /// Says once per uid that its connections are refused (a foreign
    /// client that retries would fill the log otherwise).
    fn log_refusal(&self, owner: &Owner, why: &str) {
        match owner {
            Owner::Uid(uid) => {
                let first = self
                    .refused
                    .lock()
                    .map(|mut seen| seen.insert(*uid))
                    .unwrap_or(true);
                if first {
                    tracing::warn!("refusing connections from uid {uid}: {why}");
                }
            }
            _ => tracing::warn!(reason = why, "refused a connection whose owner is unknown"),
        }
    }

    /// `localhost`, `127.0.0.1` or `[::1]`, with this server's port (a
    /// missing port means 80; on a Unix socket any port will do).
    fn is_own_host(&self, host: &HeaderValue) -> bool {
        let Ok(authority) = host.to_str().unwrap_or("").parse::<axum::http::uri::Authority>() else {
            return false;
        };
        let name = authority.host().to_ascii_lowercase();
        LOOPBACK_HOSTS.contains(&name.as_str())
            && self
                .port
                .is_none_or(|port| authority.port_u16().unwrap_or(80) == port)
    }

    /// `http://` and a loopback name with this server's port, nothing else.
    fn is_own_origin(&self, origin: &HeaderValue) -> bool {
        let Ok(text) = origin.to_str() else { return false };
        let Ok(url) = url::Url::parse(text) else {
            return false;
        };
        let name = match url.host() {
            Some(url::Host::Domain(domain)) => domain.to_ascii_lowercase(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => format!("[{ip}]"),
            None => return false,
        };
        url.scheme() == "http"
            && LOOPBACK_HOSTS.contains(&name.as_str())
            && self
                .port
                .is_none_or(|port| url.port_or_known_default() == Some(port))
            && matches!(url.path(), "" | "/")
            && url.username().is_empty()
            && url.query().is_none()
    }
}

impl Guard {
    fn port_shown(&self) -> String {
        self.port
            .map_or_else(|| "PORT".to_owned(), |port| port.to_string())
    }
}

/// A header value for an error message, quoted, without control bytes.
fn shown(value: &HeaderValue) -> String {
    format!("{:?}", String::from_utf8_lossy(value.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new(Some(8765), Bearer::none(), 1000)
    }

    #[test]
    fn only_our_own_uid_is_admitted() {
        assert!(owner_admitted(&Owner::Uid(1000), 1000).is_ok());
        let other = owner_admitted(&Owner::Uid(65534), 1000).unwrap_err();
        assert!(
            other.contains("uid 65534") && other.contains("uid 1000"),
            "{other}"
        );
        assert!(owner_admitted(&Owner::Unknown("gone".into()), 1000).is_err());
        // Only where the system cannot tell, and a token guards instead.
        assert!(owner_admitted(&Owner::Unchecked, 1000).is_ok());
    }

    #[test]
    fn on_a_unix_socket_any_port_is_ours() {
        let guard = Guard::new(None, Bearer::none(), 1000);
        assert!(guard.is_own_host(&HeaderValue::from_static("localhost")));
        assert!(guard.is_own_host(&HeaderValue::from_static("localhost:1234")));
        assert!(!guard.is_own_host(&HeaderValue::from_static("evil.example")));
        assert!(guard.is_own_origin(&HeaderValue::from_static("http://localhost")));
        assert!(!guard.is_own_origin(&HeaderValue::from_static("http://evil.example")));
    }

    #[test]
    fn only_loopback_names_with_our_port_are_our_host() {
        let guard = guard();
        let host = |text: &'static str| guard.is_own_host(&HeaderValue::from_static(text));
        assert!(host("127.0.0.1:8765"));
        assert!(host("localhost:8765"));
        assert!(host("LOCALHOST:8765"));
        assert!(host("[::1]:8765"));
        assert!(!host("127.0.0.1:8766"));
        assert!(!host("127.0.0.1"));
        assert!(!host("evil.example:8765"));
        assert!(!host("127.0.0.1.evil.example:8765"));
    }

    #[test]
    fn only_loopback_http_origins_with_our_port_are_ours() {
        let guard = guard();
        let origin = |text: &'static str| guard.is_own_origin(&HeaderValue::from_static(text));
        assert!(origin("http://localhost:8765"));
        assert!(origin("http://127.0.0.1:8765"));
        assert!(origin("http://[::1]:8765"));
        assert!(!origin("https://localhost:8765"));
        assert!(!origin("http://evil.example"));
        assert!(!origin("http://localhost:8766"));
        assert!(!origin("null"));
    }
}
