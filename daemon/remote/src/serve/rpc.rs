//! JSON-RPC as the endpoint sees it: what a POST carries, and the error
//! bodies of refused requests.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::budget::Held;

/// Revisions whose `MCP-Protocol-Version` header is accepted.
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// Revisions without `initialize` or sessions: every request carries its
/// version in `_meta`.
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The `_meta` key that names a stateless request's revision.
pub const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// JSON-RPC: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// Transport-level refusal (the SDKs' convention).
pub const SERVER_ERROR: i64 = -32000;
/// No such session.
pub const SESSION_NOT_FOUND: i64 = -32001;
/// A routing header disagrees with the body (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;

/// What one JSON-RPC message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Has a method and an id: expects a response.
    Request,
    /// Has a method, no id.
    Notification,
    /// Has an id and a result or an error.
    Response,
}

/// One parsed JSON-RPC message.
#[derive(Debug)]
pub struct Message {
    /// The whole message.
    pub value: Value,
    /// What it is.
    pub kind: Kind,
    /// The share of the body budget its body took, given back once the
    /// relay has read it.
    held: Held,
}

impl Message {
    /// Parses one message; a batch or anything else is refused.
    pub fn parse(body: &[u8]) -> Result<Message, Rejection> {
        let value: Value = serde_json::from_slice(body).map_err(|error| {
            Rejection::new(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                format!("the body is not JSON: {error}"),
            )
        })?;
        Message::classify(value)
    }

    /// Classifies a parsed message.
    pub fn classify(value: Value) -> Result<Message, Rejection> {
        let invalid = |what: &str| Rejection::new(StatusCode::BAD_REQUEST, INVALID_REQUEST, what.to_owned());
        if value.is_array() {
            return Err(invalid(
                "JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per POST",
            ));
        }
        let Some(object) = value.as_object() else {
            return Err(invalid("the body is not a JSON-RPC message (an object)"));
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(invalid("the message lacks \"jsonrpc\": \"2.0\""));
        }
        let has_id = object
            .get("id")
            .is_some_and(|id| id.is_string() || id.is_number());
        let kind = match (object.get("method").and_then(Value::as_str), has_id) {
            (Some(_), true) => Kind::Request,
            (Some(_), false) if object.get("id").is_none() => Kind::Notification,
            (None, true) if object.contains_key("result") || object.contains_key("error") => Kind::Response,
            _ => {
                return Err(invalid(
                    "the message is neither a request, a notification nor a response",
                ));
            }
        };
        Ok(Message {
            value,
            kind,
            held: Held::none(),
        })
    }

    /// The method, for a request or notification.
    pub fn method(&self) -> Option<&str> {
        self.value.get("method").and_then(Value::as_str)
    }

    /// The id, for a request or response.
    pub fn id(&self) -> Option<&Value> {
        self.value.get("id")
    }

    /// The revision a stateless request names in `_meta`, if it names one
    /// of [`STATELESS_VERSIONS`].
    pub fn stateless_version(&self) -> Option<&str> {
        let version = self.meta()?.get(VERSION_META)?.as_str()?;
        STATELESS_VERSIONS.contains(&version).then_some(version)
    }

    /// `params._meta`.
    pub fn meta(&self) -> Option<&serde_json::Map<String, Value>> {
        self.value.get("params")?.get("_meta")?.as_object()
    }

    /// The request's progress token, if it asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta()?.get("progressToken")
    }

    /// The message keeps `held` until the relay has read it.
    pub fn holding(mut self, held: Held) -> Message {
        self.held = held;
        self
    }

    /// The message as one line for a relay, newline included, holding its
    /// share of the body budget until read.
    pub fn into_line(self) -> bytes::Bytes {
        self.held.line(self.value.to_string().into_bytes())
    }
}

/// The key an id is known by in routing tables: its JSON text, so that
/// `1` and `"1"` stay apart.
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// A JSON-RPC error response for `id`, as one line.
pub fn error_line(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// A refused HTTP request: its status and JSON-RPC error body (boxed:
/// it travels in every handler's `Err`).
#[derive(Debug)]
pub struct Rejection(Box<Refusal>);

#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    code: i64,
    message: String,
    id: Value,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Rejection {
    /// A refusal with `status`, JSON-RPC `code` and `message`.
    pub fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Rejection {
        Rejection(Box::new(Refusal {
            status,
            code,
            message: message.into(),
            id: Value::Null,
            headers: Vec::new(),
        }))
    }

    /// 400 with [`SERVER_ERROR`].
    pub fn bad_request(message: impl Into<String>) -> Rejection {
        Rejection::new(StatusCode::BAD_REQUEST, SERVER_ERROR, message)
    }

    /// The refusal answers the request with `id`.
    pub fn for_id(mut self, id: Option<&Value>) -> Rejection {
        self.0.id = id.cloned().unwrap_or(Value::Null);
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Rejection {
        self.0.headers.push((name, value));
        self
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let Refusal {
            status,
            code,
            message,
            id,
            headers,
        } = *self.0;
        let body = error_line(&id, code, &message);
        let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        for (name, value) in headers {
            response.headers_mut().append(name, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart() {
        let kind = |text: &str| Message::parse(text.as_bytes()).map(|m| m.kind);
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#).ok(),
            Some(Kind::Request)
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","method":"a"}"#).ok(),
            Some(Kind::Notification)
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#).ok(),
            Some(Kind::Response)
        );
        assert!(kind(r#"[{"jsonrpc":"2.0","method":"a"}]"#).is_err());
        assert!(kind(r#"{"id":1,"method":"a"}"#).is_err());
        assert!(kind("not json").is_err());
    }

    #[test]
    fn a_stateless_request_is_known_by_its_meta() -> Result<(), Rejection> {
        let message = Message::parse(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        )?;
        assert_eq!(message.stateless_version(), Some("2026-07-28"));
        let old = Message::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)?;
        assert_eq!(old.stateless_version(), None);
        Ok(())
    }
}
