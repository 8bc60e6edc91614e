//! What can go wrong while obtaining authorization: each variant names
//! the URL, status or OAuth error involved, never a secret value.

use reqwest::StatusCode;

/// Why a server's authorization could not be obtained.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The server asks for authorization this client cannot give (a
    /// challenge without the `Bearer` scheme).
    #[error("the server asks for authorization (HTTP {status}), which elicit cannot obtain")]
    Unsupported {
        /// The HTTP status of the challenge.
        status: StatusCode,
    },
    /// A challenge this client cannot answer (no `Bearer` scheme, or a 403
    /// that is not `insufficient_scope`).
    #[error("the server refused the request (HTTP {status}){detail}")]
    Refused {
        /// The HTTP status of the challenge.
        status: StatusCode,
        /// Why, in a few words, starting with a separator.
        detail: String,
    },
    /// An HTTP request failed before any answer came.
    #[error("could not reach {url}: {reason}")]
    Http {
        /// The URL asked.
        url: String,
        /// The transport error, in words.
        reason: String,
    },
    /// An answer that is not what the protocol says.
    #[error("{url} answered HTTP {status}{detail}")]
    Status {
        /// The URL asked.
        url: String,
        /// The status it answered.
        status: StatusCode,
        /// What else is known, starting with a separator.
        detail: String,
    },
    /// An answer too large to be metadata or a token.
    #[error("{url} answered more than {limit} bytes")]
    TooLarge {
        /// The URL asked.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// An answer that does not parse.
    #[error("{url} answered something that is not {what}: {reason}")]
    Malformed {
        /// The URL asked.
        url: String,
        /// What was expected.
        what: &'static str,
        /// The parser's words (never the body, which may hold a token).
        reason: String,
    },
    /// No metadata or endpoint to run the flow against.
    #[error("authorization discovery failed: {0}")]
    Discovery(String),
    /// The protected resource metadata names another resource than the
    /// server (RFC 9728 §3.3): its authorization server must not be used.
    #[error("the protected resource metadata is for {advertised}, not for {server}")]
    ResourceMismatch {
        /// The `resource` the metadata names.
        advertised: String,
        /// The server's URL.
        server: String,
    },
    /// The authorization server metadata speaks for another issuer than
    /// the one it was fetched for (RFC 8414 §3.3): a mix-up, or a
    /// misconfigured server, whose endpoints must not be used.
    #[error(
        "the authorization server metadata at {url} is for the issuer {advertised}, not for {expected}, \
         which it was fetched for: refusing to use it (RFC 8414 §3.3)"
    )]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The `issuer` it names (`(none)` when it names none).
        advertised: String,
        /// Where it was fetched.
        url: String,
    },
    /// The authorization response's `iss` is missing where the server
    /// says it sends one, or names another issuer (RFC 9207): the code
    /// may be another server's and is not sent anywhere.
    #[error("the authorization response {0} (RFC 9207): the code is not used")]
    WrongIss(String),
    /// The authorization server does not offer PKCE with S256.
    #[error("the authorization server {issuer} does not support PKCE with S256, which MCP requires")]
    NoPkce {
        /// Its issuer or metadata URL.
        issuer: String,
    },
    /// No way to identify this client to the authorization server.
    #[error("no client registration possible at {issuer}: {reason}")]
    Registration {
        /// The authorization server.
        issuer: String,
        /// Why.
        reason: String,
    },
    /// The authorization server answered with an OAuth error.
    #[error("{endpoint} refused: {error}{description}")]
    OAuth {
        /// The endpoint (token, registration, authorization).
        endpoint: String,
        /// The OAuth `error` code.
        error: String,
        /// `error_description`, starting with a separator, or empty.
        description: String,
    },
    /// The user declined or cancelled signing in.
    #[error("the user declined to sign in to {server} ({action})")]
    Declined {
        /// The server asking.
        server: String,
        /// What the user did: decline or cancel.
        action: String,
    },
    /// elicitd could not be reached, so the user could not be asked; the
    /// authorization URL was not opened.
    #[error("no broker reachable to ask the user's consent to sign in ({0}); nothing was opened")]
    NoBroker(String),
    /// The broker refused the consent request.
    #[error("the broker refused the sign-in request: {0}")]
    BrokerRefused(String),
    /// The browser never came back to the redirect listener.
    #[error("no authorization response reached {redirect} within {secs} s")]
    RedirectTimeout {
        /// The loopback redirect URI.
        redirect: String,
        /// How long it waited.
        secs: u64,
    },
    /// The redirect listener could not start.
    #[error("could not listen for the authorization redirect on loopback: {0}")]
    Listener(String),
    /// The redirect came back with a wrong `state` (a forged or stale
    /// response) or without a code.
    #[error("the authorization response was rejected: {0}")]
    BadRedirect(String),
    /// Step-ups that gained nothing went on too long.
    #[error("the server still asks for more scope ({scope}) after {attempts} authorizations; giving up")]
    StepUpLimit {
        /// The scope it asks.
        scope: String,
        /// How many authorizations were tried in a row.
        attempts: u32,
    },
    /// Keeping the tokens failed (the Secret Service and the file both).
    #[error("could not keep the tokens: {0}")]
    Store(String),
    /// Waiting was cancelled (the proxy is shutting down).
    #[error("authorization cancelled")]
    Cancelled,
}

impl AuthError {
    /// An [`AuthError::Http`] for `url` from a reqwest error, without the
    /// URL reqwest adds (it may carry a code in its query).
    pub(crate) fn http(url: &str, error: reqwest::Error) -> AuthError {
        let error = error.without_url();
        let mut reason = error.to_string();
        if let Some(source) = std::error::Error::source(&error) {
            reason = format!("{reason}: {source}");
        }
        AuthError::Http {
            url: url.to_owned(),
            reason,
        }
    }
}
