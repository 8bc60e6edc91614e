//! The user's consent to sign in: the authorization URL goes to the user
//! as a URL-mode elicitation through elicitd, naming the server and the
//! host that ask, so whichever front-end the user runs shows it and
//! nothing opens unless the user accepts.

use elicit_client::{ClientSession, connect};
use elicit_proto::dbus::Origin;
use url::Url;

use super::error::AuthError;

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
        error if error.broker_unreachable() => AuthError::NoBroker(error.to_string()),
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
