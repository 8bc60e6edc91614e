//! The user's consent to sign in: the authorization URL goes to the user
//! as a URL-mode elicitation through elicitd, naming the server and the
//! host that ask, so whichever front-end the user runs shows it and
//! nothing opens unless the user accepts.

use elicit_client::{ClientSession, connect};
use elicit_proto::dbus::Origin;
use reqwest::Client;
use reqwest::header::LOCATION;
use url::Url;

use super::error::AuthError;

/// How the authorization URL reaches a browser.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Consent {
    /// Asked through elicitd (on `bus`, or the session bus): the
    /// front-end opens the URL once the user accepts.
    #[default]
    Broker,
    /// Nobody is asked: the proxy GETs the URL itself and follows its
    /// redirects to the loopback listener. Only for authorization servers
    /// that grant without a user, such as the MCP conformance suite's.
    Unattended,
}

/// Asks the user, through the broker at `bus`, to open `url` and sign in
/// to `server`; `Ok` once the user accepted.
pub async fn ask_broker(
    bus: Option<&str>,
    origin: &Origin,
    server: &str,
    url: &Url,
) -> Result<(), AuthError> {
    let conn = connect(bus)
        .await
        .map_err(|e| AuthError::NoBroker(e.to_string()))?;
    let mut session = ClientSession::open(&conn, origin)
        .await
        .map_err(|e| AuthError::NoBroker(e.to_string()))?;
    let elicitation_id = format!(
        "auth-{}-{}",
        std::process::id(),
        oauth2::CsrfToken::new_random().secret()
    );
    let message = match origin.host.as_deref() {
        Some(host) => {
            format!("{server} asks you to sign in, so that {host} can use it. Open the sign-in page?")
        }
        None => format!("{server} asks you to sign in. Open the sign-in page?"),
    };
    let request = serde_json::json!({
        "mode": "url",
        "message": message,
        "url": url.as_str(),
        "elicitationId": elicitation_id,
    });
    let outcome = async {
        let form = session.submit(&request.to_string(), None, None).await?;
        session.wait(&form).await
    }
    .await;
    if let Err(error) = session.close().await {
        tracing::debug!(%error, "closing the consent session failed");
    }
    let outcome = outcome.map_err(|error| match error {
        elicit_proto::Error::Bus(_) => AuthError::NoBroker(error.to_string()),
        other => AuthError::BrokerRefused(other.to_string()),
    })?;
    if outcome.action == "accept" {
        Ok(())
    } else {
        Err(AuthError::Declined {
            server: server.to_owned(),
            action: outcome.action,
        })
    }
}

/// How many redirects an unattended authorization follows.
const MAX_HOPS: usize = 10;

/// GETs `url` and follows its redirects by hand until one reaches the
/// loopback listener, on a client of its own that follows none: the
/// bridge's refuses the authorization server's redirect to loopback, as
/// it refuses any redirect to another origin.
pub async fn fetch_unattended(url: &Url) -> Result<(), AuthError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| AuthError::http(&origin_only(url), e))?;
    let mut at = url.clone();
    for _ in 0..MAX_HOPS {
        let response = http
            .get(at.as_str())
            .send()
            .await
            .map_err(|e| AuthError::http(&origin_only(&at), e))?;
        let status = response.status();
        if !status.is_redirection() {
            if status.is_success() {
                return Ok(());
            }
            return Err(AuthError::Status {
                url: origin_only(&at),
                status,
                detail: " to the unattended authorization".into(),
            });
        }
        let Some(next) = response.headers().get(LOCATION).and_then(|v| v.to_str().ok()) else {
            return Err(AuthError::BadRedirect("a redirect without a Location".into()));
        };
        at = at
            .join(next)
            .map_err(|e| AuthError::BadRedirect(format!("a redirect to an unparsable Location: {e}")))?;
    }
    Err(AuthError::BadRedirect(format!("more than {MAX_HOPS} redirects")))
}

/// `url` without its query: the query of an authorization response holds
/// the code, which must not reach an error message.
fn origin_only(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}
