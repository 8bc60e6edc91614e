//! What goes wrong between the bridge and the server, and how the host
//! reads it: every failure of a request becomes a JSON-RPC error for that
//! request, made here and nowhere else.

use bytes::Bytes;
use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use crate::auth::AuthError;

/// Why a message did not get its answer from the server.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// No HTTP exchange at all (refused, reset, TLS, a refused redirect).
    #[error("cannot reach {url}: {reason}")]
    Unreachable {
        /// The server's address, without query or credentials.
        url: String,
        /// Why, with every cause (a refused redirect says which host).
        reason: String,
    },
    /// The server answered with an error status.
    #[error("the server answered HTTP {status}{detail}")]
    Status {
        /// The status code.
        status: u16,
        /// `: ` and the start of the body, when it had text.
        detail: String,
    },
    /// A 2025-era session the server no longer knows (404).
    #[error("the server no longer knows this session (HTTP 404): restart the connection to start a new one")]
    SessionExpired,
    /// The event stream ended, and could not be resumed, before the
    /// response came.
    #[error("the server's event stream ended before its response ({0})")]
    StreamEnded(&'static str),
    /// A body or one event over the cap.
    #[error("the server sent a message over {limit} bytes; it was refused")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// The event stream could not be read.
    #[error("the server's event stream is broken: {0}")]
    Events(String),
    /// A body that is neither JSON nor an event stream.
    #[error("the server answered with `{0}`, neither JSON nor an event stream")]
    ContentType(String),
    /// A body that is not JSON.
    #[error("the server's answer is not JSON: {0}")]
    NotJson(String),
    /// Authorization failed.
    #[error(transparent)]
    Auth(#[from] AuthError),
}

impl BridgeError {
    /// The JSON-RPC error line the host gets for request `id`.
    pub fn to_line(&self, id: &Value) -> Bytes {
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": JsonRpcCode::INTERNAL_ERROR,
                "message": format!("elicit proxy: {self}"),
            },
        });
        let mut line = serde_json::to_vec(&message).unwrap_or_default();
        line.push(b'\n');
        Bytes::from(line)
    }

    /// A failure to exchange with `url`, without the address inside the
    /// error (it may carry a query with a key).
    pub fn unreachable(url: &url::Url, source: reqwest::Error) -> BridgeError {
        let source = source.without_url();
        let mut reason = source.to_string();
        let mut cause = std::error::Error::source(&source);
        while let Some(error) = cause {
            reason = format!("{reason}: {error}");
            cause = error.source();
        }
        BridgeError::Unreachable {
            url: super::shown(url),
            reason,
        }
    }
}
