//! What every request passes before it reaches an endpoint: the `Host`
//! and `Origin` checks against DNS rebinding (a web page whose name an
//! attacker re-points at 127.0.0.1 reaches loopback with its own Host and
//! Origin), then the bearer token.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::rpc::{Rejection, SERVER_ERROR};
use super::token::Bearer;

/// What the guard checks against.
#[derive(Debug, Clone)]
pub struct Guard {
    /// The port the server is bound to.
    pub port: u16,
    /// The token, if one is required.
    pub bearer: Bearer,
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
        let host = request
            .headers()
            .get(header::HOST)
            .ok_or_else(|| forbidden("the request has no Host header".into()))?;
        if !self.is_own_host(host) {
            return Err(forbidden(format!(
                "Host header {} is not this server (expected 127.0.0.1:{port}, localhost:{port} or [::1]:{port})",
                shown(host),
                port = self.port
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN)
            && !self.is_own_origin(origin)
        {
            return Err(forbidden(format!(
                "Origin header {} is not allowed (only http://localhost:{port}, http://127.0.0.1:{port} \
                 or http://[::1]:{port}): a web page may not reach this server",
                shown(origin),
                port = self.port
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

    /// `localhost`, `127.0.0.1` or `[::1]`, with this server's port (a
    /// missing port means 80).
    fn is_own_host(&self, host: &HeaderValue) -> bool {
        let Ok(authority) = host.to_str().unwrap_or("").parse::<axum::http::uri::Authority>() else {
            return false;
        };
        let name = authority.host().to_ascii_lowercase();
        LOOPBACK_HOSTS.contains(&name.as_str()) && authority.port_u16().unwrap_or(80) == self.port
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
            && url.port_or_known_default() == Some(self.port)
            && matches!(url.path(), "" | "/")
            && url.username().is_empty()
            && url.query().is_none()
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
        Guard {
            port: 8765,
            bearer: Bearer::none(),
        }
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
