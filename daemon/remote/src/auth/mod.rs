//! MCP authorization, the client side (MCP 2025-06-18 and 2025-11-25,
//! with the 2025-03-26 fallbacks): a server's 401 leads to discovery
//! ([`discovery`]), client registration ([`register`]), the user's
//! consent through elicitd ([`consent`]), the code flow with PKCE on a
//! loopback redirect ([`flow`], [`redirect`]), and tokens kept in the
//! Secret Service or a private file ([`store`]), refreshed before they
//! expire; a 403 `insufficient_scope` steps the scopes up, a bounded
//! number of times.
//!
//! The bridge calls [`Auth::header`] before each request and
//! [`Auth::challenged`] on a 401 or 403, then sends the request again.

mod challenge;
mod consent;
mod discovery;
mod error;
mod flow;
mod http;
mod metadata;
mod redirect;
mod register;
mod scopes;
mod secret;
mod store;
mod tokens;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use elicit_proto::dbus::Origin;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;
use url::Url;

use challenge::Challenge;
use discovery::Discovered;
pub use error::AuthError;
use redirect::Redirect;
pub use register::ClientIdentity;
pub use secret::Secret;
pub use store::StoreChoice;
use store::{Key, Store};
use tokens::Tokens;

/// How the client authorizes to one server.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The broker's bus address; `None` for the session bus.
    pub bus: Option<String>,
    /// Who asks, as the consent shows it: `server` is the server's name
    /// (its URL's host when nothing better is known), `host` the MCP
    /// host's, which [`Auth::set_host`] fills in once known.
    pub origin: Origin,
    /// A pre-registered client, or a Client ID Metadata Document URL.
    pub identity: ClientIdentity,
    /// Scopes to ask for instead of the server's.
    pub scopes: Option<Vec<String>>,
    /// Where tokens are kept.
    pub store: StoreChoice,
    /// How many times in a row to authorize again when a challenge adds
    /// no scope to those already asked (a server that never accepts);
    /// MCP's conformance suite allows at most 3 attempts in all.
    pub step_up_limit: u32,
    /// How long to wait for the user's consent and the browser's return.
    pub patience: Duration,
}

impl Default for AuthConfig {
    fn default() -> AuthConfig {
        AuthConfig {
            bus: None,
            origin: Origin::default(),
            identity: ClientIdentity {
                client_name: "elicit".into(),
                ..ClientIdentity::default()
            },
            scopes: None,
            store: StoreChoice::Auto,
            step_up_limit: 2,
            patience: Duration::from_secs(300),
        }
    }
}

/// After this long without a challenge, a new one starts a new count of
/// repeated authorizations (a token that served for a while and then
/// expired is not a loop).
const QUIET: Duration = Duration::from_secs(60);

/// How long a user's "no" to signing in answers later challenges too, so
/// that every request of a host that keeps trying does not ask again.
const DECLINE_MEMORY: Duration = Duration::from_secs(300);

/// Authorization for one remote server.
#[derive(Debug)]
pub struct Auth {
    http: reqwest::Client,
    /// The MCP server's URL.
    server: Url,
    config: AuthConfig,
    origin: std::sync::Mutex<Origin>,
    store: Store,
    key: Key,
    /// Held across a whole authorization, so that concurrent requests wait
    /// for it instead of starting their own.
    state: tokio::sync::Mutex<State>,
    /// Counts the tokens obtained (authorized or refreshed), read without
    /// the lock: a challenge that waited for the lock while another one
    /// got new tokens is answered by those.
    generation: AtomicU64,
    cancel: CancellationToken,
}

#[derive(Debug, Default)]
struct State {
    /// Whether the store was read.
    loaded: bool,
    tokens: Option<Tokens>,
    discovered: Option<Discovered>,
    /// The scopes asked for so far.
    wanted: Vec<String>,
    /// Challenges in a row that added no scope.
    repeats: u32,
    last_challenge: Option<Instant>,
    /// When and how the user last declined, within [`DECLINE_MEMORY`].
    declined: Option<(Instant, String)>,
}

impl Auth {
    /// Authorization for the MCP server at `resource`, whose requests go
    /// through `http`.
    pub fn new(http: reqwest::Client, resource: Url, config: AuthConfig) -> Auth {
        let mut origin = config.origin.clone();
        if origin.server.is_none() {
            origin.server = resource.host_str().map(str::to_owned);
        }
        let key = Key {
            resource: metadata::canonical_resource(&resource),
            client: config
                .identity
                .client_id
                .clone()
                .or_else(|| config.identity.metadata_document.as_ref().map(Url::to_string))
                .unwrap_or_else(|| "dynamic".into()),
        };
        Auth {
            http,
            server: resource,
            store: Store::new(config.store.clone()),
            config,
            origin: std::sync::Mutex::new(origin),
            key,
            state: tokio::sync::Mutex::new(State::default()),
            generation: AtomicU64::new(0),
            cancel: CancellationToken::new(),
        }
    }

    /// Names the MCP host (its `clientInfo.name`) in later consent requests.
    pub fn set_host(&self, name: &str) {
        if let Ok(mut origin) = self.origin.lock() {
            origin.host = Some(name.to_owned());
        }
    }

    /// Ends any wait for the user or the browser: the authorization under
    /// way fails with [`AuthError::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The `Authorization` value for the next request, if any (refreshing a
    /// token about to expire first).
    pub async fn header(&self) -> Result<Option<HeaderValue>, AuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if state.tokens.as_ref().is_some_and(|t| t.expiring(tokens::now()))
            && let Err(error) = self.refresh(&mut state).await
        {
            // The server's 401 will start a new authorization.
            tracing::info!(%error, "refreshing the access token failed");
            state.tokens = None;
            self.store.forget(&self.key).await;
        }
        Ok(state.tokens.as_ref().and_then(bearer))
    }

    /// A request was answered 401 or 403 with these headers: obtains (or
    /// steps up) authorization; `Ok` means the request should be sent again.
    pub async fn challenged(&self, status: StatusCode, headers: &HeaderMap) -> Result<(), AuthError> {
        let challenge = match Challenge::from_headers(headers) {
            Some(challenge) => challenge,
            // A 401 without a usable challenge still gets discovery at
            // the well-known places (2025-03-26 servers send none).
            None if status == StatusCode::UNAUTHORIZED
                && headers.get(reqwest::header::WWW_AUTHENTICATE).is_none() =>
            {
                Challenge::default()
            }
            None => return Err(AuthError::Unsupported { status }),
        };
        let step_up = status == StatusCode::FORBIDDEN;
        if step_up && !challenge.insufficient_scope() {
            return Err(AuthError::Refused {
                status,
                detail: challenge
                    .error
                    .map(|error| format!(": {error}"))
                    .unwrap_or_default(),
            });
        }
        let seen = self.generation.load(Ordering::Acquire);
        let mut state = self.state.lock().await;
        if self.generation.load(Ordering::Acquire) != seen {
            // Concurrent requests all meet the same 401: the first to get
            // the lock authorizes, and the others send again with its token.
            return Ok(());
        }
        self.load(&mut state).await;
        let wanted = self.wanted(&state, &challenge, step_up)?;
        self.count(&mut state, &wanted)?;
        if !step_up && state.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some()) {
            match self.refresh(&mut state).await {
                Ok(()) => return Ok(()),
                Err(error) => tracing::info!(%error, "refreshing after a 401 failed: authorizing anew"),
            }
        }
        if let Some((at, action)) = &state.declined
            && at.elapsed() < DECLINE_MEMORY
        {
            return Err(AuthError::Declined {
                server: self.server_name(),
                action: action.clone(),
            });
        }
        state.wanted = wanted;
        let authorized = self.authorize(&mut state, &challenge).await;
        if let Err(AuthError::Declined { action, .. }) = &authorized {
            state.declined = Some((Instant::now(), action.clone()));
        }
        authorized
    }

    /// The server's name as the consent shows it.
    fn server_name(&self) -> String {
        self.origin
            .lock()
            .ok()
            .and_then(|o| o.server.clone())
            .unwrap_or_else(|| self.server.to_string())
    }

    async fn load(&self, state: &mut State) {
        if !state.loaded {
            state.loaded = true;
            state.tokens = self.store.load(&self.key).await;
            if let Some(tokens) = &state.tokens {
                state.wanted = tokens.scopes.clone();
            }
        }
    }

    /// The scopes the next authorization asks for.
    fn wanted(&self, state: &State, challenge: &Challenge, step_up: bool) -> Result<Vec<String>, AuthError> {
        let asked = challenge.scope.as_deref().unwrap_or_default();
        if step_up {
            return Ok(scopes::union(&state.wanted, asked));
        }
        if self.config.scopes.is_some() || challenge.scope.as_ref().is_some_and(|s| !s.is_empty()) {
            return Ok(scopes::choose(
                self.config.scopes.as_deref(),
                challenge.scope.as_deref(),
                None,
            ));
        }
        // Only now is the resource metadata needed for its scopes.
        let supported = match &state.discovered {
            Some(found) => found.scopes_supported.clone(),
            None => None,
        };
        Ok(scopes::choose(None, None, supported.as_deref()))
    }

    /// Counts one more challenge; too many in a row without a new scope
    /// is a loop (conformance `auth/scope-retry-limit`).
    fn count(&self, state: &mut State, wanted: &[String]) -> Result<(), AuthError> {
        let quiet = state.last_challenge.is_none_or(|at| at.elapsed() > QUIET);
        state.last_challenge = Some(Instant::now());
        let grew = wanted.iter().any(|scope| !state.wanted.contains(scope));
        if quiet || grew {
            state.repeats = 0;
        } else {
            state.repeats += 1;
        }
        if state.repeats > self.config.step_up_limit {
            return Err(AuthError::StepUpLimit {
                scope: wanted.join(" "),
                attempts: state.repeats,
            });
        }
        Ok(())
    }

    async fn refresh(&self, state: &mut State) -> Result<(), AuthError> {
        let Some(tokens) = state.tokens.as_mut() else {
            return Err(AuthError::Discovery("no tokens to refresh".into()));
        };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Err(AuthError::Discovery("no refresh token".into()));
        };
        let grant = flow::refresh(
            &self.http,
            &tokens.client,
            &tokens.token_endpoint,
            &refresh_token,
            &tokens.resource,
        )
        .await?;
        grant.apply(tokens);
        self.keep(tokens).await;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Runs the whole authorization code flow for `state.wanted`.
    async fn authorize(&self, state: &mut State, challenge: &Challenge) -> Result<(), AuthError> {
        let rediscover = match &state.discovered {
            None => true,
            Some(found) => challenge.resource_metadata.is_some() && challenge.resource_metadata != found.from,
        };
        if rediscover {
            state.discovered = Some(
                discovery::discover(&self.http, &self.server, challenge.resource_metadata.as_deref()).await?,
            );
        }
        let Some(found) = state.discovered.clone() else {
            return Err(AuthError::Discovery("nothing discovered".into()));
        };
        // The scopes of a first 401 without a `scope` come from the
        // metadata just read.
        if state.wanted.is_empty() && self.config.scopes.is_none() {
            state.wanted = scopes::choose(None, None, found.scopes_supported.as_deref());
        }
        let pkce = found
            .server
            .code_challenge_methods_supported
            .as_deref()
            .unwrap_or_default();
        if !pkce.iter().any(|method| method == "S256") {
            return Err(AuthError::NoPkce {
                issuer: found.issuer.clone(),
            });
        }
        let state_token = Secret::new(oauth2::CsrfToken::new_random().secret().clone());
        let previous = state.tokens.as_ref();
        let redirect = Redirect::listen(previous.and_then(|t| t.redirect_port), state_token.clone()).await?;
        let client = match previous {
            // A registration is kept with its redirect port: a dynamic
            // client registered on another port must register again.
            Some(tokens)
                if tokens.redirect_port == Some(redirect.port())
                    || self.config.identity.client_id.is_some()
                    || tokens.client.id.starts_with("https://") =>
            {
                tokens.client.clone()
            }
            _ => register::identify(&self.http, &found, &self.config.identity, redirect.uri()).await?,
        };
        let requested = with_offline_access(&state.wanted, found.server.scopes_supported.as_deref());
        let started = flow::start(
            &client,
            &found.server.authorization_endpoint,
            redirect.uri(),
            &requested,
            &found.resource,
            &state_token,
        )?;
        let redirect_uri = redirect.uri().to_owned();
        let redirect_port = redirect.port();
        let returned = tokio::time::timeout(self.config.patience, async {
            self.ask(&started.url).await?;
            redirect.code(self.config.patience, &self.cancel).await
        })
        .await
        .map_err(|_| AuthError::RedirectTimeout {
            redirect: redirect_uri.clone(),
            secs: self.config.patience.as_secs(),
        })??;
        // Mix-up defence: a code another issuer sent is not traded at
        // this issuer's token endpoint.
        redirect::check_iss(
            &found.issuer,
            found.server.authorization_response_iss_parameter_supported,
            returned.iss.as_deref(),
        )?;
        let code = returned.code;
        let grant = flow::exchange(
            &self.http,
            &client,
            &found.server.token_endpoint,
            &redirect_uri,
            started,
            code,
            &found.resource,
        )
        .await?;
        let mut tokens = Tokens {
            client,
            access_token: grant.access_token.clone(),
            refresh_token: None,
            expires_at: None,
            scopes: state.wanted.clone(),
            token_endpoint: found.server.token_endpoint.clone(),
            resource: found.resource.clone(),
            redirect_port: Some(redirect_port),
        };
        grant.apply(&mut tokens);
        self.keep(&tokens).await;
        state.tokens = Some(tokens);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Gets the authorization URL to a browser, as configured.
    async fn ask(&self, url: &Url) -> Result<(), AuthError> {
        let origin = self.origin.lock().map(|o| o.clone()).unwrap_or_default();
        let server = origin.server.clone().unwrap_or_else(|| self.server.to_string());
        let asked = async {
            // Only ever through the user: an authorization server that
            // grants without one (a test's) still waits for a human's yes.
            consent::ask_broker(self.config.bus.as_deref(), &origin, &server, url).await
        };
        tokio::select! {
            asked = asked => asked,
            () = self.cancel.cancelled() => Err(AuthError::Cancelled),
        }
    }

    /// Stores `tokens`; a failure only costs the next run a sign-in.
    async fn keep(&self, tokens: &Tokens) {
        if let Err(error) = self.store.save(&self.key, tokens).await {
            tracing::warn!(%error, "the tokens are kept for this run only");
        }
    }
}

/// `scopes`, plus `offline_access` when the authorization server lists it
/// (SEP-2207): the tokens are kept and refreshed, which is what that scope
/// asks for. Not added to an empty list, which would replace the server's
/// default scopes by this one alone.
fn with_offline_access(scopes: &[String], supported: Option<&[String]>) -> Vec<String> {
    const OFFLINE: &str = "offline_access";
    let offered = supported.is_some_and(|s| s.iter().any(|scope| scope == OFFLINE));
    if offered && !scopes.is_empty() {
        scopes::union(scopes, &[OFFLINE.to_owned()])
    } else {
        scopes.to_vec()
    }
}

/// `Bearer <access token>`, marked sensitive so that `http` hides it.
fn bearer(tokens: &Tokens) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", tokens.access_token.expose())).ok()?;
    value.set_sensitive(true);
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bridge spawns the requests that authorize, so these futures
    /// must be `Send` for any lifetime (a closure as `oauth2`'s HTTP
    /// client once made them not).
    #[allow(dead_code)]
    fn futures_are_send(auth: &'static Auth, headers: &'static HeaderMap) {
        fn is_send<T: Send>(_: T) {}
        is_send(auth.header());
        is_send(auth.challenged(StatusCode::UNAUTHORIZED, headers));
    }

    #[test]
    fn offline_access_only_when_offered_and_scopes_are_asked() {
        let offered = ["a".to_owned(), "offline_access".to_owned()];
        assert_eq!(
            with_offline_access(&["a".into()], Some(&offered)),
            ["a", "offline_access"]
        );
        assert_eq!(with_offline_access(&["a".into()], Some(&offered[..1])), ["a"]);
        assert!(with_offline_access(&[], Some(&offered)).is_empty());
    }
}
