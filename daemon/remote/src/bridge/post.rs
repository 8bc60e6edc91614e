//! One message to the server: its POST, and the answer read from a JSON
//! body or an event stream, resumed where the server allows it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::{Method, Response, StatusCode};
use serde_json::Value;

use super::body::{self, Kind};
use super::era::LAST_EVENT_ID;
use super::error::BridgeError;
use super::session::Session;
use elicit_proxy::caps::{META_CLIENT_INFO, META_PROTOCOL_VERSION};

/// A message the relay wrote for the server, with what the transport
/// needs to know of it.
#[derive(Debug)]
pub struct Outgoing {
    body: Bytes,
    value: Value,
}

impl Outgoing {
    /// `body` as sent, and its parse.
    pub fn new(body: Bytes, value: Value) -> Outgoing {
        Outgoing { body, value }
    }

    /// The message as sent.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The parsed message.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Its method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        self.value.get("method").and_then(Value::as_str)
    }

    /// The key of its id, for requests.
    pub fn id_key(&self) -> Option<String> {
        self.method()?;
        Some(self.value.get("id")?.to_string())
    }

    /// A request: the server owes it an answer.
    pub fn waits_for_answer(&self) -> bool {
        self.method().is_some() && self.value.get("id").is_some()
    }

    /// The 2025 eras' handshake.
    pub fn is_initialize(&self) -> bool {
        self.method() == Some("initialize")
    }

    /// The tool a `tools/call` calls.
    pub fn tool(&self) -> Option<&str> {
        if self.method() != Some("tools/call") {
            return None;
        }
        self.value.get("params")?.get("name")?.as_str()
    }

    /// The host's name, from `initialize`'s `clientInfo` or a 2026-07-28
    /// request's `_meta`.
    pub fn host_name(&self) -> Option<&str> {
        let params = self.value.get("params")?;
        let info = if self.is_initialize() {
            params.get("clientInfo")?
        } else {
            params.get("_meta")?.get(META_CLIENT_INFO)?
        };
        info.get("name")?.as_str()
    }

    /// The protocol version a 2026-07-28 request carries in `_meta`.
    pub fn meta_version(&self) -> Option<&str> {
        self.value
            .get("params")?
            .get("_meta")?
            .get(META_PROTOCOL_VERSION)?
            .as_str()
    }
}

/// Sends `message` and relays its answer; a request that gets none gets an
/// error naming why.
pub async fn send(session: Arc<Session>, message: Outgoing) {
    session.note_outgoing(&message);
    let id = message
        .waits_for_answer()
        .then(|| message.value.get("id").cloned())
        .flatten();
    let in_use = session.session_id();
    let mut outcome = attempt(&session, &message, id.as_ref()).await;
    if matches!(outcome, Err(BridgeError::SessionExpired)) {
        outcome = match session.renew(in_use).await {
            Ok(()) => attempt(&session, &message, id.as_ref()).await,
            Err(error) => Err(error),
        };
    }
    match (outcome, &id) {
        (Err(error), Some(id)) => session.fail(id, &error).await,
        (Err(error), None) => session.warn("a message could not be delivered", &error),
        (Ok(()), Some(id)) if session.is_waiting(&id.to_string()) && !session.has_sessions() => {
            // Stateless: nothing else will ever carry this answer.
            session.fail(id, &BridgeError::StreamEnded("none was sent")).await;
        }
        (Ok(()), _) => {}
    }
}

/// Sends `message` once and reads its answer.
async fn attempt(session: &Session, message: &Outgoing, id: Option<&Value>) -> Result<(), BridgeError> {
    let response = session
        .execute(|| {
            session
                .request(Method::POST, Some(message))
                .body(message.body.clone())
        })
        .await?;
    answer(session, response, id, message.is_initialize()).await
}

/// Reads the answer to one POST.
async fn answer(
    session: &Session,
    response: Response,
    id: Option<&Value>,
    initialize: bool,
) -> Result<(), BridgeError> {
    let status = response.status();
    if status == StatusCode::NOT_FOUND && session.has_sessions() && !initialize {
        return Err(BridgeError::SessionExpired);
    }
    if !status.is_success() {
        return Err(refusal(response).await);
    }
    if initialize {
        session.set_session_id(&response);
    }
    let cap = session.max_message_bytes();
    match body::kind(&response)? {
        Kind::Empty => Ok(()),
        Kind::Json => {
            for line in body::messages(&body::whole(response, cap).await?)? {
                session.deliver(line).await;
            }
            Ok(())
        }
        Kind::Events => follow(session, response, id).await,
    }
}

/// An error status as the host will read it: a JSON-RPC error the server
/// put in the body goes through as it is, anything else is summed up.
async fn refusal(response: Response) -> BridgeError {
    let status = response.status().as_u16();
    let text = body::whole(response, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let detail = match serde_json::from_str::<Value>(&text) {
        Ok(value) => value
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(|m| format!(": {m}"))
            .unwrap_or_default(),
        Err(_) => {
            let line: String = text.lines().next().unwrap_or("").chars().take(200).collect();
            if line.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", line.trim())
            }
        }
    };
    BridgeError::Status { status, detail }
}

/// Relays an event stream until the awaited answer came; a stream that
/// ends before it is resumed with `Last-Event-ID` after the server's
/// `retry`, as often as the options allow (2025 eras).
async fn follow(session: &Session, response: Response, id: Option<&Value>) -> Result<(), BridgeError> {
    let mut asked = Vec::new();
    let followed = follow_asking(session, response, id, &mut asked).await;
    if followed.is_err() {
        session.abandon(&asked).await;
    }
    followed
}

/// [`follow`], gathering the ids of the requests the server made on the
/// stream into `asked`.
async fn follow_asking(
    session: &Session,
    response: Response,
    id: Option<&Value>,
    asked: &mut Vec<Value>,
) -> Result<(), BridgeError> {
    let key = id.map(Value::to_string);
    let mut end = relay_events(session, response, key.as_deref()).await;
    asked.append(&mut end.asked);
    let mut resumes = 0;
    loop {
        let Some(key) = &key else {
            return end.error.map_or(Ok(()), Err);
        };
        if !session.is_waiting(key) {
            return Ok(());
        }
        if let Some(error @ BridgeError::TooLarge { .. }) = end.error {
            return Err(error);
        }
        let Some(last_event) = end.last_event.clone() else {
            return Err(end.error.unwrap_or(BridgeError::StreamEnded(
                "the server gave no event id to resume from",
            )));
        };
        if !session.has_sessions() || resumes >= session.options().max_resumes {
            return Err(end
                .error
                .unwrap_or(BridgeError::StreamEnded("it could not be resumed")));
        }
        resumes += 1;
        tokio::time::sleep(end.retry.unwrap_or(session.options().default_retry)).await;
        let response = session
            .execute(|| {
                session
                    .request(Method::GET, None)
                    .header(LAST_EVENT_ID, last_event.as_str())
            })
            .await?;
        if !response.status().is_success() {
            return Err(refusal(response).await);
        }
        let mut resumed = relay_events(session, response, Some(key)).await;
        asked.append(&mut resumed.asked);
        end = StreamEnd {
            last_event: resumed.last_event.or(end.last_event),
            retry: resumed.retry.or(end.retry),
            error: resumed.error,
            asked: Vec::new(),
        };
    }
}

/// How an event stream ended.
#[derive(Debug, Default)]
pub struct StreamEnd {
    /// The last event id the server gave.
    pub last_event: Option<String>,
    /// The last reconnection delay the server asked for.
    pub retry: Option<Duration>,
    /// Why it ended, when not by the server closing it.
    pub error: Option<BridgeError>,
    /// Ids of the requests the server made on it.
    pub asked: Vec<Value>,
}

/// Relays each event's message until the stream ends or, when `awaited`
/// is given, that request has its answer.
pub async fn relay_events(session: &Session, response: Response, awaited: Option<&str>) -> StreamEnd {
    let mut events = body::events(response, session.max_message_bytes());
    let mut end = StreamEnd::default();
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                end.error = Some(error);
                break;
            }
        };
        if let Some(id) = event.id {
            end.last_event = Some(id);
        }
        if let Some(retry) = event.retry {
            end.retry = Some(Duration::from_millis(retry));
        }
        // An event without data primes the stream (it carries an id to
        // resume from); it is no message.
        let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        match body::messages(data.as_bytes()) {
            Ok(lines) => {
                for line in lines {
                    if let Some(id) = request_id(&line) {
                        end.asked.push(id);
                    }
                    session.deliver(line).await;
                }
            }
            Err(error) => session.warn("an event that is not JSON was dropped", &error),
        }
        if awaited.is_some_and(|key| !session.is_waiting(key)) {
            break;
        }
    }
    end
}

/// The id of a request (not a response, not a notification).
fn request_id(line: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(default)]
        id: Option<Value>,
        #[serde(default, borrow)]
        method: Option<&'a str>,
    }
    let head: Head<'_> = serde_json::from_slice(line).ok()?;
    head.method.and(head.id)
}
