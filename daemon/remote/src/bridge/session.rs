//! What one connection to a remote server remembers, behind one lock that
//! only this file takes.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::era::{self, Era, ParamHeaders};
use super::error::BridgeError;
use super::post::Outgoing;
use super::{Options, shown};
use crate::auth::Auth;

/// How often one message is sent again after an authorization challenge:
/// once to authorize, once more for a step-up.
const MAX_CHALLENGES: u32 = 3;

/// One connection: the HTTP client, the user's headers, the era and
/// session, and the requests still waiting for an answer.
pub struct Session {
    options: Options,
    http: reqwest::Client,
    auth: Auth,
    lines: mpsc::Sender<Bytes>,
    state: Mutex<State>,
    /// Held while a lost session is replaced, so that requests failing
    /// together open one new session, not one each.
    renewal: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    era: Era,
    session_id: Option<HeaderValue>,
    /// The GET stream has been started (2025 eras, once initialized).
    listening: bool,
    initialized: bool,
    /// Requests sent and not answered: id key → method.
    waiting: HashMap<String, String>,
    /// `x-mcp-header` marks of each tool, from `tools/list`.
    marks: HashMap<String, ParamHeaders>,
    /// The host's `initialize`, as sent: a lost session is opened again
    /// with it.
    handshake: Option<Bytes>,
    /// Requests of the server (id keys) the relay has not answered yet.
    server_requests: HashSet<String>,
}

/// Only the envelope of an answer: the rest stays unparsed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<&'a str>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
}

impl Session {
    /// A connection for `options`; answers go to `lines`.
    pub fn new(options: Options, http: reqwest::Client, auth: Auth, lines: mpsc::Sender<Bytes>) -> Session {
        Session {
            options,
            http,
            auth,
            lines,
            state: Mutex::new(State::default()),
            renewal: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave this state half-changed: every
        // change is one assignment or one map operation.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The cap on one message.
    pub fn max_message_bytes(&self) -> usize {
        self.options.max_message_bytes
    }

    /// The transport's options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Remembers what `message` tells about the era, and that a request
    /// now waits for its answer.
    pub fn note_outgoing(&self, message: &Outgoing) {
        let mut state = self.state();
        if let Some(version) = message.meta_version() {
            state.era = Era::Stateless(version.to_owned());
        } else if message.is_initialize() {
            state.era = Era::Session(None);
            state.handshake = Some(message.body().clone());
        }
        if let Some(name) = message.host_name() {
            // The sign-in consent names the host as the forms do.
            self.auth.set_host(name);
        }
        if message.method().is_none()
            && let Some(id) = message.value().get("id")
        {
            state.server_requests.remove(&id.to_string());
        }
        if let (Some(key), Some(method)) = (message.id_key(), message.method()) {
            state.waiting.insert(key, method.to_owned());
        }
        if message.method() == Some("notifications/initialized") {
            state.initialized = true;
        }
    }

    /// True once, when a 2025-era session is initialized: its GET stream
    /// should now open.
    pub fn should_listen(&self) -> bool {
        let mut state = self.state();
        let ready = matches!(state.era, Era::Session(_)) && state.initialized && !state.listening;
        if ready {
            state.listening = true;
        }
        ready
    }

    /// Whether request `key` still waits for its answer.
    pub fn is_waiting(&self, key: &str) -> bool {
        self.state().waiting.contains_key(key)
    }

    /// Whether the connection follows the 2025 eras' session rules.
    pub fn has_sessions(&self) -> bool {
        matches!(self.state().era, Era::Session(_))
    }

    /// Remembers the session the server opened.
    pub fn set_session_id(&self, response: &Response) {
        if let Some(id) = response.headers().get(era::SESSION_ID) {
            self.state().session_id = Some(id.clone());
        }
    }

    /// A request to the server's endpoint with every header this message
    /// needs: the user's, the era's, the session's.
    pub fn request(&self, method: Method, message: Option<&Outgoing>) -> RequestBuilder {
        let mut headers = self.options.headers.clone();
        {
            let state = self.state();
            match &state.era {
                Era::Session(Some(version)) => {
                    if let Ok(value) = HeaderValue::try_from(version.as_str()) {
                        headers.insert(era::PROTOCOL_VERSION, value);
                    }
                }
                Era::Stateless(version) => {
                    if let Ok(value) = HeaderValue::try_from(version.as_str()) {
                        headers.insert(era::PROTOCOL_VERSION, value);
                    }
                    if let Some(message) = message {
                        let marks = message.tool().and_then(|tool| state.marks.get(tool));
                        era::stateless_headers(message.value(), marks, &mut headers);
                    }
                }
                Era::Session(None) | Era::Unknown => {}
            }
            if let Some(id) = &state.session_id {
                headers.insert(era::SESSION_ID, id.clone());
            }
        }
        let accept = if method == Method::GET {
            "text/event-stream"
        } else {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            "application/json, text/event-stream"
        };
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        self.http
            .request(method, self.options.url.clone())
            .headers(headers)
    }

    /// Sends a request built by `build`, authorizing and sending again as
    /// the server's challenges ask.
    pub async fn execute(&self, build: impl Fn() -> RequestBuilder) -> Result<Response, BridgeError> {
        let mut challenges = 0;
        loop {
            let mut request = build();
            // The user's own Authorization header wins over any flow.
            if !self.options.headers.contains_key(reqwest::header::AUTHORIZATION)
                && let Some(value) = self.auth.header().await?
            {
                request = request.header(reqwest::header::AUTHORIZATION, value);
            }
            let response = request
                .send()
                .await
                .map_err(|source| BridgeError::unreachable(&self.options.url, source))?;
            let status = response.status();
            let challenged = status == StatusCode::UNAUTHORIZED
                || (status == StatusCode::FORBIDDEN
                    && response.headers().contains_key(reqwest::header::WWW_AUTHENTICATE));
            if !challenged
                || challenges >= MAX_CHALLENGES
                || self.options.headers.contains_key(reqwest::header::AUTHORIZATION)
            {
                return Ok(response);
            }
            challenges += 1;
            self.auth.challenged(status, response.headers()).await?;
        }
    }

    /// One message from the server, as a line for the relay. Answers
    /// settle the request they answer; an `initialize` result sets the
    /// era's version, a `tools/list` result the header marks.
    pub async fn deliver(&self, mut line: Vec<u8>) {
        let envelope = serde_json::from_slice::<Envelope<'_>>(&line).ok();
        if let Some(Envelope {
            id: Some(id),
            method: Some(_),
            ..
        }) = &envelope
        {
            self.state().server_requests.insert(id.to_string());
        }
        if let Some(envelope) = envelope
            && envelope.method.is_none()
            && let Some(id) = &envelope.id
        {
            let method = self.state().waiting.remove(&id.to_string());
            match (method.as_deref(), envelope.result) {
                (Some("initialize"), Some(result)) => {
                    let version = serde_json::from_str::<Value>(result.get())
                        .ok()
                        .and_then(|r| r.get("protocolVersion")?.as_str().map(str::to_owned));
                    self.state().era = Era::Session(version);
                }
                (Some("tools/list"), Some(result)) => {
                    if let Ok(result) = serde_json::from_str::<Value>(result.get()) {
                        let marks = era::param_headers(&result);
                        self.state().marks.extend(marks);
                    }
                }
                _ => {}
            }
        }
        line.push(b'\n');
        let _ = self.lines.send(Bytes::from(line)).await;
    }

    /// Fails request `id` with `error`, unless it was answered meanwhile.
    pub async fn fail(&self, id: &Value, error: &BridgeError) {
        if self.state().waiting.remove(&id.to_string()).is_some() {
            tracing::debug!(%error, "a request to the remote server failed");
            let _ = self.lines.send(error.to_line(id)).await;
        }
    }

    /// The server's requests among `ids` that the relay has not answered:
    /// their stream is lost, so the relay is told they were cancelled (it
    /// withdraws their forms) rather than keep a human on a question nobody
    /// will read the answer to.
    pub async fn abandon(&self, ids: &[Value]) {
        for id in ids {
            if self.state().server_requests.remove(&id.to_string()) {
                let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id, "reason": "the server's event stream was lost"}});
                if let Ok(line) = serde_json::to_vec(&cancelled) {
                    self.deliver(line).await;
                }
            }
        }
    }

    /// Opens a new session with the host's own `initialize` after the
    /// server lost the old one (HTTP 404: it restarted, or expired it), so
    /// that the host's request can be sent again as if nothing happened.
    /// The new handshake's answer is the bridge's, not the host's.
    pub async fn renew(&self, lost: Option<HeaderValue>) -> Result<(), BridgeError> {
        let _renewing = self.renewal.lock().await;
        if self.state().session_id != lost {
            // Another request renewed it meanwhile.
            return Ok(());
        }
        let Some(handshake) = self.state().handshake.clone() else {
            return Err(BridgeError::SessionExpired);
        };
        let mut initialize: Value =
            serde_json::from_slice(&handshake).map_err(|error| BridgeError::NotJson(error.to_string()))?;
        initialize["id"] = json!("elicit-proxy-renewal");
        let body = Bytes::from(serde_json::to_vec(&initialize).unwrap_or_default());
        self.state().session_id = None;
        let response = self
            .execute(|| self.request(Method::POST, None).body(body.clone()))
            .await?;
        if !response.status().is_success() {
            return Err(BridgeError::SessionExpired);
        }
        self.set_session_id(&response);
        let _ = super::body::whole(response, self.max_message_bytes()).await;
        let initialized = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        self.execute(|| self.request(Method::POST, None).body(initialized.clone()))
            .await?;
        eprintln!(
            "elicit proxy: {} lost the session (HTTP 404); a new one was opened",
            shown(&self.options.url)
        );
        Ok(())
    }

    /// The session id now in use.
    pub fn session_id(&self) -> Option<HeaderValue> {
        self.state().session_id.clone()
    }

    /// Tells the user about a failure that no request waits for.
    pub fn warn(&self, what: &str, error: &BridgeError) {
        eprintln!("elicit proxy: {what} at {}: {error}", shown(&self.options.url));
    }

    /// Ends a 2025-era session at the server (DELETE); a server that does
    /// not allow it (405) has nothing to end.
    pub async fn end(&self) {
        if !self.has_sessions() || self.state().session_id.is_none() {
            return;
        }
        let ended = self.execute(|| self.request(Method::DELETE, None)).await;
        if let Err(error) = ended {
            tracing::debug!(%error, "ending the session failed");
        }
    }
}
