//! The loopback redirect (RFC 8252 §7.3): a listener on 127.0.0.1 that
//! takes the one authorization response whose `state` matches, answers
//! the browser with a short page, and hands the code over.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Html;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::error::AuthError;
use super::register::oauth_error;
use super::secret::Secret;

/// The path of the redirect URI.
const PATH: &str = "/callback";

/// What the browser brought back.
type Response = Result<Returned, AuthError>;

/// A successful authorization response.
#[derive(Debug)]
pub struct Returned {
    /// The authorization code.
    pub code: Secret,
    /// The `iss` parameter (RFC 9207), if the server sent one.
    pub iss: Option<String>,
}

/// Whether an authorization response's `iss` is acceptable: it must be
/// the issuer whose endpoint was used, and it must be there when that
/// issuer's metadata says it sends one (RFC 9207 §2.4).
pub fn check_iss(issuer: &str, required: bool, iss: Option<&str>) -> Result<(), AuthError> {
    match iss {
        // A plain string comparison, as RFC 9207 says.
        Some(iss) if iss == issuer => Ok(()),
        Some(iss) => Err(AuthError::WrongIss(format!(
            "comes from the issuer {iss:?}, not from {issuer:?}, which was asked"
        ))),
        None if required => Err(AuthError::WrongIss(format!(
            "carries no iss, which {issuer:?} says it always sends"
        ))),
        None => Ok(()),
    }
}

/// Shared with the handler: the expected state, and where the one
/// response goes.
struct Waiting {
    state: Secret,
    reply: Mutex<Option<oneshot::Sender<Response>>>,
}

/// A listener waiting for one authorization response.
pub struct Redirect {
    uri: String,
    port: u16,
    response: oneshot::Receiver<Response>,
    stop: CancellationToken,
}

impl Redirect {
    /// Listens on 127.0.0.1, on `port` if it is free (the port a client
    /// was registered with), else on any; only a response carrying `state`
    /// is taken.
    pub async fn listen(port: Option<u16>, state: Secret) -> Result<Redirect, AuthError> {
        let listener = match port {
            Some(port) => match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => listener,
                Err(_) => bind_any().await?,
            },
            None => bind_any().await?,
        };
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::Listener(e.to_string()))?
            .port();
        let (reply, response) = oneshot::channel();
        let waiting = Arc::new(Waiting {
            state,
            reply: Mutex::new(Some(reply)),
        });
        let router = axum::Router::new()
            .route(PATH, axum::routing::get(callback))
            .with_state(waiting);
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { stopped.cancelled().await })
                .await;
            if let Err(error) = served {
                tracing::debug!(%error, "the redirect listener stopped");
            }
        });
        Ok(Redirect {
            uri: format!("http://127.0.0.1:{port}{PATH}"),
            port,
            response,
            stop,
        })
    }

    /// The redirect URI to register and send.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Waits for the code, at most `patience`, or until `cancel`.
    pub async fn code(
        mut self,
        patience: Duration,
        cancel: &CancellationToken,
    ) -> Result<Returned, AuthError> {
        tokio::select! {
            response = &mut self.response => {
                response.unwrap_or_else(|_| Err(AuthError::Listener("the listener stopped".into())))
            }
            () = tokio::time::sleep(patience) => Err(AuthError::RedirectTimeout {
                redirect: self.uri.clone(),
                secs: patience.as_secs(),
            }),
            () = cancel.cancelled() => Err(AuthError::Cancelled),
        }
    }
}

impl Drop for Redirect {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn bind_any() -> Result<tokio::net::TcpListener, AuthError> {
    tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| AuthError::Listener(e.to_string()))
}

const DONE: &str = "<!doctype html><meta charset=utf-8><title>elicit</title>\
<p>Authorization complete. You may close this tab.</p>";
const FAILED: &str = "<!doctype html><meta charset=utf-8><title>elicit</title>\
<p>Authorization failed; elicit reports why. You may close this tab.</p>";
const STRAY: &str = "<!doctype html><meta charset=utf-8><title>elicit</title>\
<p>This is not the authorization response elicit is waiting for.</p>";

async fn callback(
    State(waiting): State<Arc<Waiting>>,
    Query(query): Query<HashMap<String, String>>,
) -> (StatusCode, Html<&'static str>) {
    // A response without the expected state is someone else's (or a
    // forgery, RFC 6749 §10.12): refused, and the wait goes on.
    if query.get("state").map(String::as_str) != Some(waiting.state.expose()) {
        return (StatusCode::BAD_REQUEST, Html(STRAY));
    }
    let Some(reply) = waiting.reply.lock().ok().and_then(|mut reply| reply.take()) else {
        return (StatusCode::OK, Html(DONE));
    };
    let (status, page, response) = match (query.get("code"), query.get("error")) {
        (_, Some(error)) => (
            StatusCode::OK,
            FAILED,
            Err(oauth_error(
                "the authorization endpoint",
                error.clone(),
                query.get("error_description").cloned(),
            )),
        ),
        (Some(code), None) => (
            StatusCode::OK,
            DONE,
            Ok(Returned {
                code: Secret::new(code.clone()),
                iss: query.get("iss").cloned(),
            }),
        ),
        (None, None) => (
            StatusCode::BAD_REQUEST,
            FAILED,
            Err(AuthError::BadRedirect(
                "it carries neither a code nor an error".into(),
            )),
        ),
    };
    let _ = reply.send(response);
    (status, Html(page))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(url: &str) -> u16 {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .build()
            .unwrap()
            .get(url)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn takes_the_matching_response_only() {
        let redirect = Redirect::listen(None, Secret::new("s1")).await.unwrap();
        let uri = redirect.uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:"));
        assert_eq!(get(&format!("{uri}?code=forged&state=other")).await, 400);
        assert_eq!(get(&format!("{uri}?code=c1&state=s1")).await, 200);
        let returned = redirect
            .code(Duration::from_secs(5), &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(returned.code.expose(), "c1");
        assert_eq!(returned.iss, None);
    }

    #[tokio::test]
    async fn the_iss_parameter_is_kept() {
        let redirect = Redirect::listen(None, Secret::new("s")).await.unwrap();
        let uri = redirect.uri().to_owned();
        assert_eq!(
            get(&format!("{uri}?code=c&state=s&iss=https%3A%2F%2Fas.example")).await,
            200
        );
        let returned = redirect
            .code(Duration::from_secs(5), &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(returned.iss.as_deref(), Some("https://as.example"));
    }

    #[test]
    fn iss_must_match_and_be_there_when_advertised() {
        let issuer = "https://as.example";
        assert!(check_iss(issuer, true, Some(issuer)).is_ok());
        assert!(check_iss(issuer, false, Some(issuer)).is_ok());
        assert!(check_iss(issuer, false, None).is_ok());
        let missing = check_iss(issuer, true, None).unwrap_err().to_string();
        assert!(missing.contains("carries no iss"), "{missing}");
        // Compared wherever it is present, advertised or not.
        for required in [true, false] {
            let wrong = check_iss(issuer, required, Some("https://evil.example"))
                .unwrap_err()
                .to_string();
            assert!(
                wrong.contains("https://evil.example") && wrong.contains(issuer),
                "{wrong}"
            );
        }
        // A plain comparison: no trailing-slash or case leniency.
        assert!(check_iss(issuer, false, Some("https://as.example/")).is_err());
    }

    #[tokio::test]
    async fn an_error_response_is_reported() {
        let redirect = Redirect::listen(None, Secret::new("s")).await.unwrap();
        let uri = redirect.uri().to_owned();
        get(&format!("{uri}?error=access_denied&error_description=no&state=s")).await;
        let error = redirect
            .code(Duration::from_secs(5), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(error.to_string().contains("access_denied: no"), "{error}");
    }

    #[tokio::test]
    async fn waiting_is_bounded_and_cancellable() {
        let redirect = Redirect::listen(None, Secret::new("s")).await.unwrap();
        let error = redirect
            .code(Duration::from_millis(50), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(error, AuthError::RedirectTimeout { .. }));
        let redirect = Redirect::listen(None, Secret::new("s")).await.unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let error = redirect.code(Duration::from_secs(60), &cancel).await.unwrap_err();
        assert!(matches!(error, AuthError::Cancelled));
    }
}
