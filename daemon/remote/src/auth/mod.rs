//! MCP authorization, the client side. (Being written: for now no server
//! asks, and a challenge is an error.)

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};

/// Why a server's authorization could not be obtained.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The server asks for authorization this bridge cannot give.
    #[error("the server asks for authorization (HTTP {status}), which elicit cannot obtain")]
    Unsupported {
        /// The HTTP status of the challenge.
        status: StatusCode,
    },
}

/// Authorization for one remote server.
#[derive(Debug, Default)]
pub struct Auth {}

impl Auth {
    /// The `Authorization` value for the next request, if any.
    pub async fn header(&self) -> Result<Option<HeaderValue>, AuthError> {
        Ok(None)
    }

    /// A request was answered 401 or 403 with these headers: obtains (or
    /// steps up) authorization; `Ok` means the request should be sent again.
    pub async fn challenged(&self, status: StatusCode, _headers: &HeaderMap) -> Result<(), AuthError> {
        Err(AuthError::Unsupported { status })
    }
}
