//! The Streamable HTTP verbs of one endpoint: POST carries a message,
//! GET opens (or resumes) a session's stream, DELETE ends a session.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::endpoint::Endpoint;
use super::rpc::{HEADER_MISMATCH, Kind, Message, Rejection, SUPPORTED_VERSIONS, VERSION_META};
use super::session::gone;

/// The session header.
const SESSION_ID: &str = "mcp-session-id";
/// The revision header.
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// 2026-07-28: the body's method, mirrored.
const MCP_METHOD: &str = "mcp-method";
/// 2026-07-28: the body's tool, prompt or resource, mirrored.
const MCP_NAME: &str = "mcp-name";
/// Where a reconnecting client stopped.
const LAST_EVENT_ID: &str = "last-event-id";

/// POST: one JSON-RPC message.
pub async fn post(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap, body: Body) -> Response {
    match handle_post(&endpoint, &headers, body).await {
        Ok(response) => response,
        Err(rejection) => rejection.into_response(),
    }
}

async fn handle_post(
    endpoint: &Arc<Endpoint>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, Rejection> {
    let content_type = text(headers, header::CONTENT_TYPE.as_str()).unwrap_or("");
    if !content_type.to_ascii_lowercase().starts_with("application/json") {
        return Err(Rejection::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            super::rpc::SERVER_ERROR,
            format!("Content-Type {content_type:?} is not application/json"),
        ));
    }
    let sse = accepts(headers, true)?;
    check_version(headers)?;
    let length = text(headers, header::CONTENT_LENGTH.as_str()).and_then(|n| n.parse().ok());
    let (body, held) = endpoint.budget.read(body, length).await?;
    let message = Message::parse(&body)?.holding(held);
    // The parsed message holds the budget from here on.
    drop(body);
    if let Some(id) = text(headers, SESSION_ID) {
        let session = endpoint.session(id).ok_or_else(|| gone(id))?;
        return match message.kind {
            Kind::Request => session.request(message, sse, session.primed()).await,
            Kind::Notification | Kind::Response => {
                session.pass(message).await?;
                Ok(StatusCode::ACCEPTED.into_response())
            }
        };
    }
    if let Some(version) = message.stateless_version() {
        check_stateless_headers(headers, &message, version)?;
        return match message.kind {
            Kind::Request => endpoint.shared()?.request(message, sse).await,
            // Cancellation is the client closing its request's stream: a
            // stateless notification names ids no one here can place.
            Kind::Notification => Ok(StatusCode::ACCEPTED.into_response()),
            Kind::Response => Err(Rejection::bad_request(
                "a stateless (2026-07-28) client sends no responses: servers send it no requests",
            )),
        };
    }
    if message.kind == Kind::Request && message.method() == Some("initialize") {
        let session = endpoint.create_session()?;
        session.set_primed(asks_priming(&message));
        let mut response = session.request(message, sse, session.primed()).await?;
        if let Ok(value) = HeaderValue::from_str(&session.id) {
            response.headers_mut().insert(SESSION_ID, value);
        }
        return Ok(response);
    }
    Err(Rejection::bad_request(format!(
        "the Mcp-Session-Id header is missing: only initialize (or a 2026-07-28 request with \
         _meta[\"{VERSION_META}\"]) may come without one"
    ))
    .for_id(message.id()))
}

/// GET: the session's stream, or the one `Last-Event-ID` names.
pub async fn get(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap) -> Response {
    let outcome = (|| {
        accepts(&headers, false)?;
        check_version(&headers)?;
        let session = session_of(&endpoint, &headers)?;
        session.open(text(&headers, LAST_EVENT_ID), session.primed())
    })();
    outcome.unwrap_or_else(IntoResponse::into_response)
}

/// DELETE: ends the session and its server.
pub async fn delete(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap) -> Response {
    let outcome = (|| {
        check_version(&headers)?;
        let session = session_of(&endpoint, &headers)?;
        endpoint.end_session(&session.id);
        Ok::<_, Rejection>(StatusCode::OK.into_response())
    })();
    outcome.unwrap_or_else(IntoResponse::into_response)
}

/// The session a GET or DELETE names; a stateless client has none.
fn session_of(endpoint: &Endpoint, headers: &HeaderMap) -> Result<Arc<super::session::Session>, Rejection> {
    match text(headers, SESSION_ID) {
        Some(id) => endpoint.session(id).ok_or_else(|| gone(id)),
        None if text(headers, PROTOCOL_VERSION)
            .is_some_and(|v| super::rpc::STATELESS_VERSIONS.contains(&v)) =>
        {
            Err(Rejection::new(
                StatusCode::METHOD_NOT_ALLOWED,
                super::rpc::SERVER_ERROR,
                "2026-07-28 has no sessions: GET and DELETE are not allowed",
            )
            .header(header::ALLOW, HeaderValue::from_static("POST")))
        }
        None => Err(Rejection::bad_request("the Mcp-Session-Id header is missing")),
    }
}

/// The first revision whose SSE streams begin with a priming event (an id
/// and an empty `data:`, SEP-1699).
const PRIMING_SINCE: &str = "2025-11-25";

/// Whether a stream of this session starts with the priming event
/// (`initialize`'s answer included): only when its `initialize` asked for
/// 2025-11-25 or later. Clients of 2025-06-18 know no such event, and some
/// fail on it: the TypeScript SDK before 1.24, which the Gemini CLI 0.61
/// bundles, parses the empty `data:` as JSON and drops the connection. The
/// session's revision decides, not each request's `MCP-Protocol-Version`:
/// the Gemini CLI's GET stream comes without the header, and the
/// conformance suite's 2025-11-25 polling check sends `2025-03-26` in it.
/// Whether `initialize` asks for a revision whose streams are primed.
fn asks_priming(initialize: &Message) -> bool {
    // Revisions are dates: they order as text.
    initialize
        .value
        .pointer("/params/protocolVersion")
        .and_then(Value::as_str)
        .is_some_and(|version| version >= PRIMING_SINCE)
}

/// Whether to answer with SSE; `json_ok` when plain JSON would do.
fn accepts(headers: &HeaderMap, json_ok: bool) -> Result<bool, Rejection> {
    let accept = text(headers, header::ACCEPT.as_str())
        .unwrap_or("*/*")
        .to_ascii_lowercase();
    let sse = accept.contains("text/event-stream");
    let json = ["application/json", "application/*", "*/*"]
        .iter()
        .any(|t| accept.contains(t));
    if sse || (json_ok && json) {
        return Ok(sse);
    }
    let wanted = if json_ok {
        "application/json or text/event-stream"
    } else {
        "text/event-stream"
    };
    Err(Rejection::new(
        StatusCode::NOT_ACCEPTABLE,
        super::rpc::SERVER_ERROR,
        format!("the Accept header {accept:?} takes neither of what this endpoint sends: {wanted}"),
    ))
}

/// An `MCP-Protocol-Version` header, when present, names a revision this
/// server speaks.
fn check_version(headers: &HeaderMap) -> Result<(), Rejection> {
    match headers.get(PROTOCOL_VERSION) {
        None => Ok(()),
        Some(value) => match value.to_str() {
            Ok(version) if SUPPORTED_VERSIONS.contains(&version) => Ok(()),
            _ => Err(Rejection::bad_request(format!(
                "MCP-Protocol-Version header {:?} is not supported (supported: {})",
                String::from_utf8_lossy(value.as_bytes()),
                SUPPORTED_VERSIONS.join(", ")
            ))),
        },
    }
}

/// 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` and (for the methods
/// that name something) `Mcp-Name` mirror the body; the upstream behind a
/// relay never sees the headers, so they are checked here.
fn check_stateless_headers(headers: &HeaderMap, message: &Message, version: &str) -> Result<(), Rejection> {
    let mismatch = |message_text: String| {
        Rejection::new(StatusCode::BAD_REQUEST, HEADER_MISMATCH, message_text).for_id(message.id())
    };
    if text(headers, PROTOCOL_VERSION) != Some(version) {
        return Err(mismatch(format!(
            "MCP-Protocol-Version header {:?} does not match the body's _meta[\"{VERSION_META}\"] {version:?}",
            text(headers, PROTOCOL_VERSION).unwrap_or("(missing)")
        )));
    }
    let method = message.method().unwrap_or("");
    if text(headers, MCP_METHOD) != Some(method) {
        return Err(mismatch(format!(
            "Mcp-Method header {:?} does not match the body's method {method:?}",
            text(headers, MCP_METHOD).unwrap_or("(missing)")
        )));
    }
    let named = match method {
        "tools/call" | "prompts/get" => message.value.pointer("/params/name"),
        "resources/read" => message.value.pointer("/params/uri"),
        _ => None,
    };
    if let Some(Value::String(name)) = named {
        let header = text(headers, MCP_NAME);
        // A value outside visible ASCII travels as `=?base64?…?=`: it is
        // compared decoded, so that an encoded header cannot skip the check.
        let decoded = header
            .map(crate::bridge::era::decode)
            .transpose()
            .map_err(|why| {
                mismatch(format!(
                    "Mcp-Name header {:?} is not a valid encoded value: {why}",
                    header.unwrap_or_default()
                ))
            })?;
        if decoded.as_deref() != Some(name.as_str()) {
            return Err(mismatch(format!(
                "Mcp-Name header {:?} does not match the body's {:?}",
                header.unwrap_or("(missing)"),
                name
            )));
        }
    }
    Ok(())
}

fn text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod priming_tests {
    use super::*;

    fn initialize(version: &str) -> Option<Message> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        );
        Message::parse(body.as_bytes()).ok()
    }

    #[test]
    fn only_sessions_that_asked_for_2025_11_25_or_later_are_primed() {
        for (version, primed) in [
            ("2025-03-26", false),
            ("2025-06-18", false),
            ("2025-11-25", true),
            ("2026-07-28", true),
        ] {
            let Some(message) = initialize(version) else {
                panic!("the test's initialize parses");
            };
            assert_eq!(asks_priming(&message), primed, "{version}");
        }
    }
}
