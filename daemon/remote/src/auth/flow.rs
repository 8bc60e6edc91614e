//! The OAuth 2.1 authorization code flow with PKCE (S256), `state` and
//! the `resource` parameter (RFC 8707), and the refresh grant, through the
//! `oauth2` crate on the bridge's HTTP client.

use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use reqwest::Client;
use url::Url;

use super::error::AuthError;
use super::http::OAuthHttp;
use super::register::{Method, Registered, oauth_error};
use super::secret::Secret;
use super::tokens::{Tokens, expiry, now};

/// An authorization request on its way to the user.
pub struct Started {
    /// The URL the user opens.
    pub url: Url,
    /// The PKCE verifier, sent with the code.
    verifier: PkceCodeVerifier,
}

/// The client as `oauth2` knows it, without endpoints.
fn base(registered: &Registered) -> BasicClient {
    let client = BasicClient::new(ClientId::new(registered.id.clone()));
    match (&registered.secret, registered.method) {
        (Some(secret), Method::Basic) => client
            .set_client_secret(ClientSecret::new(secret.expose().to_owned()))
            .set_auth_type(AuthType::BasicAuth),
        (Some(secret), Method::Post) => client
            .set_client_secret(ClientSecret::new(secret.expose().to_owned()))
            .set_auth_type(AuthType::RequestBody),
        // A public client: its id goes in the body, and no secret at all.
        _ => client.set_auth_type(AuthType::RequestBody),
    }
}

fn redirect_url(redirect: &str) -> Result<RedirectUrl, AuthError> {
    RedirectUrl::new(redirect.to_owned()).map_err(|e| AuthError::Listener(format!("redirect URI: {e}")))
}

/// The authorization URL for `scopes` (omitted when empty) and `resource`,
/// carrying `state` and a fresh PKCE challenge.
pub fn start(
    registered: &Registered,
    authorization_endpoint: &str,
    redirect: &str,
    scopes: &[String],
    resource: &str,
    state: &Secret,
) -> Result<Started, AuthError> {
    let endpoint = AuthUrl::new(authorization_endpoint.to_owned()).map_err(|e| {
        AuthError::Discovery(format!(
            "the authorization endpoint {authorization_endpoint:?}: {e}"
        ))
    })?;
    let client = base(registered)
        .set_auth_uri(endpoint)
        .set_redirect_uri(redirect_url(redirect)?);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let state = state.expose().to_owned();
    let (url, _) = client
        .authorize_url(move || CsrfToken::new(state))
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", resource)
        .set_pkce_challenge(challenge)
        .url();
    Ok(Started { url, verifier })
}

/// Trades `code` for tokens at `token_endpoint`.
pub async fn exchange(
    http: &Client,
    registered: &Registered,
    token_endpoint: &str,
    redirect: &str,
    started: Started,
    code: Secret,
    resource: &str,
) -> Result<Grant, AuthError> {
    let client = base(registered)
        .set_token_uri(token_url(token_endpoint)?)
        .set_redirect_uri(redirect_url(redirect)?);
    let sender = OAuthHttp(http);
    let response = client
        .exchange_code(AuthorizationCode::new(code.expose().to_owned()))
        .set_pkce_verifier(started.verifier)
        .add_extra_param("resource", resource)
        .request_async(&sender)
        .await
        .map_err(|e| token_error(token_endpoint, e))?;
    Ok(Grant::from(&response))
}

/// Trades `refresh_token` for a new access token.
pub async fn refresh(
    http: &Client,
    registered: &Registered,
    token_endpoint: &str,
    refresh_token: &Secret,
    resource: &str,
) -> Result<Grant, AuthError> {
    let client = base(registered).set_token_uri(token_url(token_endpoint)?);
    let sender = OAuthHttp(http);
    let refresh_token = RefreshToken::new(refresh_token.expose().to_owned());
    let response = client
        .exchange_refresh_token(&refresh_token)
        .add_extra_param("resource", resource)
        .request_async(&sender)
        .await
        .map_err(|e| token_error(token_endpoint, e))?;
    Ok(Grant::from(&response))
}

fn token_url(token_endpoint: &str) -> Result<TokenUrl, AuthError> {
    TokenUrl::new(token_endpoint.to_owned())
        .map_err(|e| AuthError::Discovery(format!("the token endpoint {token_endpoint:?}: {e}")))
}

/// What the token endpoint granted.
#[derive(Debug)]
pub struct Grant {
    /// The access token.
    pub access_token: Secret,
    /// A refresh token, if one came.
    pub refresh_token: Option<Secret>,
    /// When the access token expires (seconds since the epoch).
    pub expires_at: Option<u64>,
    /// The scopes granted, if the server said.
    pub scopes: Option<Vec<String>>,
}

impl From<&BasicTokenResponse> for Grant {
    fn from(response: &BasicTokenResponse) -> Grant {
        Grant {
            access_token: Secret::new(response.access_token().secret().clone()),
            refresh_token: response.refresh_token().map(|t| Secret::new(t.secret().clone())),
            expires_at: expiry(now(), response.expires_in()),
            scopes: response
                .scopes()
                .map(|scopes| scopes.iter().map(|s| s.to_string()).collect()),
        }
    }
}

impl Grant {
    /// Folds the grant into `tokens` (a refresh may omit the refresh
    /// token, which then stays; RFC 6749 §6).
    pub fn apply(self, tokens: &mut Tokens) {
        tokens.access_token = self.access_token;
        if let Some(refresh_token) = self.refresh_token {
            tokens.refresh_token = Some(refresh_token);
        }
        tokens.expires_at = self.expires_at;
        if let Some(scopes) = self.scopes {
            tokens.scopes = super::scopes::union(&tokens.scopes, &scopes);
        }
    }
}

/// An [`AuthError`] from the `oauth2` crate's, without the response body
/// (which, when it fails to parse, may still hold a token).
fn token_error(endpoint: &str, error: RequestTokenError<AuthError, BasicErrorResponse>) -> AuthError {
    match error {
        RequestTokenError::ServerResponse(response) => oauth_error(
            endpoint,
            response.error().as_ref().to_owned(),
            response.error_description().cloned(),
        ),
        RequestTokenError::Request(error) => error,
        RequestTokenError::Parse(error, _body) => AuthError::Malformed {
            url: endpoint.to_owned(),
            what: "a token response",
            reason: format!("at {}: {}", error.path(), error.inner()),
        },
        RequestTokenError::Other(reason) => AuthError::Malformed {
            url: endpoint.to_owned(),
            what: "a token response",
            reason,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorization_url_carries_pkce_state_resource_and_scopes() {
        let registered = Registered {
            id: "client-1".into(),
            secret: None,
            method: Method::None,
        };
        let started = start(
            &registered,
            "https://auth.example/authorize?tenant=t",
            "http://127.0.0.1:5/callback",
            &["a".into(), "b".into()],
            "https://mcp.example/mcp",
            &Secret::new("st"),
        )
        .unwrap();
        let query: std::collections::HashMap<String, String> =
            started.url.query_pairs().into_owned().collect();
        assert_eq!(query["tenant"], "t");
        assert_eq!(query["response_type"], "code");
        assert_eq!(query["client_id"], "client-1");
        assert_eq!(query["state"], "st");
        assert_eq!(query["scope"], "a b");
        assert_eq!(query["resource"], "https://mcp.example/mcp");
        assert_eq!(query["code_challenge_method"], "S256");
        assert_eq!(query["redirect_uri"], "http://127.0.0.1:5/callback");
        assert!(!query["code_challenge"].is_empty());
    }

    #[test]
    fn no_scope_parameter_without_scopes() {
        let registered = Registered {
            id: "c".into(),
            secret: None,
            method: Method::None,
        };
        let started = start(
            &registered,
            "https://a/authorize",
            "http://127.0.0.1:5/callback",
            &[],
            "r",
            &Secret::new("s"),
        )
        .unwrap();
        assert!(!started.url.query_pairs().any(|(name, _)| name == "scope"));
    }
}
