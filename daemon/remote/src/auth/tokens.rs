//! What is kept for one server: the client the authorization server knows
//! and the tokens it issued, with when the access token expires.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::register::Registered;
use super::secret::Secret;

/// Refresh this long before the access token expires, so that a request
/// does not leave with a token that dies on the way.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// Everything needed to authorize requests to one server, and to refresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    /// The client these tokens were issued to.
    pub client: Registered,
    /// The access token, sent as `Bearer`.
    pub access_token: Secret,
    /// The refresh token, if any.
    pub refresh_token: Option<Secret>,
    /// When the access token expires, in seconds since the epoch.
    pub expires_at: Option<u64>,
    /// The scopes asked for (or granted, when the server said).
    pub scopes: Vec<String>,
    /// Where to refresh.
    pub token_endpoint: String,
    /// The `resource` the tokens are for (RFC 8707).
    pub resource: String,
    /// The loopback port the client registered its redirect URI with,
    /// tried first next time.
    pub redirect_port: Option<u16>,
}

/// Seconds since the epoch, now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// When a token issued `now` with `expires_in` expires.
pub fn expiry(now: u64, expires_in: Option<Duration>) -> Option<u64> {
    expires_in.map(|d| now.saturating_add(d.as_secs()))
}

impl Tokens {
    /// Whether the access token expires within [`REFRESH_MARGIN`] of `now`
    /// (a token without an expiry is taken as good until refused).
    pub fn expiring(&self, now: u64) -> bool {
        self.expires_at
            .is_some_and(|at| now.saturating_add(REFRESH_MARGIN.as_secs()) >= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::register::Method;

    fn tokens(expires_at: Option<u64>) -> Tokens {
        Tokens {
            client: Registered {
                id: "c".into(),
                secret: Some(Secret::new("client-secret")),
                method: Method::Basic,
            },
            access_token: Secret::new("access"),
            refresh_token: Some(Secret::new("refresh")),
            expires_at,
            scopes: vec![],
            token_endpoint: "https://a/token".into(),
            resource: "https://r/mcp".into(),
            redirect_port: None,
        }
    }

    #[test]
    fn expiring_within_the_margin() {
        assert!(!tokens(None).expiring(1000));
        assert!(!tokens(Some(1061)).expiring(1000));
        assert!(tokens(Some(1060)).expiring(1000));
        assert!(tokens(Some(10)).expiring(1000));
        assert_eq!(expiry(100, Some(Duration::from_secs(3600))), Some(3700));
    }

    #[test]
    fn debug_shows_no_secret() {
        let shown = format!("{:?}", tokens(Some(1)));
        for secret in ["client-secret", "\"access\"", "\"refresh\""] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
