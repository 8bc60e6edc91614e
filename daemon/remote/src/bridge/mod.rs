//! `elicit proxy --url`: the client side of Streamable HTTP, under a relay
//! of `elicit-proxy`.
//!
//! The relay sees the remote server as it sees a command: lines in, lines
//! out. This transport turns each line into a POST and each JSON body or
//! SSE event back into a line, so capability injection, elicitations on an
//! event stream, URL mode, -32042 and `input_required` rounds are all the
//! relay's, unchanged.
//!
//! * [`extra`] — the user's extra headers, from argv, a file or the
//!   environment;
//! * [`era`] — the headers each era asks for on every message;
//! * [`session`] — what one connection remembers: era, session, the
//!   requests still waiting;
//! * [`body`] — JSON bodies and SSE streams read with a size cap;
//! * [`post`] — one message sent, and its answer read;
//! * [`listen`] — the 2025-era GET stream, reconnected as the server says;
//! * [`resolve`] — `localhost` as loopback, whatever `/etc/hosts` says;
//! * [`error`] — what goes wrong, as the host will read it.

pub mod body;
pub mod era;
pub mod error;
pub mod extra;
pub mod listen;
pub mod post;
pub mod resolve;
pub mod session;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use elicit_proto::dbus::Origin;
use elicit_proxy::ServerEnd;
use elicit_proxy::framing::{Frame, LineReader};
use elicit_proxy::server::{Ended, Server};
use reqwest::header::HeaderMap;
use tokio::io::{BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use url::Url;

pub use error::BridgeError;
use session::Session;

use crate::auth::{Auth, AuthConfig};

/// Bytes the relay may have written and the bridge not yet sent.
const INPUT_PIPE: usize = 256 * 1024;

/// Lines received and not yet taken by the relay, before readers wait.
const OUTPUT_QUEUE: usize = 64;

/// How one bridge reaches its server.
#[derive(Debug, Clone)]
pub struct Options {
    /// The server's MCP endpoint.
    pub url: Url,
    /// Headers sent with every request, `Authorization` among them if the
    /// user gave one.
    pub headers: HeaderMap,
    /// The largest JSON body or single SSE event accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long to wait before reconnecting a dropped event stream when
    /// the server did not say (`retry`).
    pub default_retry: Duration,
    /// How many times one dropped event stream is resumed before its
    /// request fails.
    pub max_resumes: u32,
    /// How to authorize when the server asks.
    pub auth: AuthConfig,
}

impl Options {
    /// Defaults for `url`.
    pub fn new(url: Url) -> Options {
        Options {
            url,
            headers: HeaderMap::new(),
            max_message_bytes: 64 * 1024 * 1024,
            default_retry: Duration::from_secs(1),
            max_resumes: 5,
            auth: AuthConfig::default(),
        }
    }
}

/// Starts a bridge to `options.url` on the current runtime, with an HTTP
/// client and an authorization of its own.
pub fn open(options: Options) -> Result<ServerEnd, BridgeError> {
    let http = http_client()?;
    let mut auth = options.auth.clone();
    auth.origin.server = options.url.host_str().map(str::to_owned);
    let auth = Auth::new(http.clone(), options.url.clone(), auth);
    Ok(connect(options, http, auth))
}

/// Starts a bridge to `options.url` on the current runtime.
pub fn connect(options: Options, http: reqwest::Client, auth: Auth) -> ServerEnd {
    let (input, from_relay) = tokio::io::duplex(INPUT_PIPE);
    let (lines, received) = mpsc::channel::<Bytes>(OUTPUT_QUEUE);
    let (life, ended) = Server::remote();
    let origin = origin_of(&options.url);
    let session = Arc::new(Session::new(options, http, auth, lines));
    tokio::spawn(pump(session, from_relay, ended));
    ServerEnd {
        input: Box::new(input),
        output: Box::new(crate::lines::reader(received)),
        life,
        origin,
    }
}

/// Sends every line the relay writes, until it closes its side (the host
/// left): then the session is ended at the server, and so is the relay's
/// "server".
async fn pump(session: Arc<Session>, from_relay: DuplexStream, ended: Ended) {
    let mut lines = LineReader::new(BufReader::new(from_relay), session.max_message_bytes());
    let mut requests = JoinSet::new();
    loop {
        let line = match lines.next().await {
            Ok(Some(Frame::Line(line))) => line,
            Ok(Some(Frame::TooLong { bytes })) => {
                eprintln!("elicit proxy: dropped a {bytes}-byte line for the server (over the cap)");
                continue;
            }
            Ok(None) | Err(_) => break,
        };
        // Finished requests are collected as we go, so the set stays small.
        while requests.try_join_next().is_some() {}
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        let message = post::Outgoing::new(Bytes::from(line), message);
        if message.waits_for_answer() && !message.is_initialize() {
            // A request may wait for a human for minutes; the next line
            // must not wait behind it (it may be the answer it needs).
            requests.spawn(post::send(session.clone(), message));
        } else {
            // The handshake, notifications and responses keep their order.
            post::send(session.clone(), message).await;
            if session.should_listen() {
                requests.spawn(listen::run(session.clone()));
            }
        }
    }
    requests.shutdown().await;
    session.end().await;
    ended.with_code(0);
}

/// The origin of a remote server: its host until its `serverInfo` names it,
/// and its address without query or credentials (they may hold secrets).
fn origin_of(url: &Url) -> Origin {
    Origin {
        server: url.host_str().map(str::to_owned),
        command: Some(shown(url)),
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        pid: Some(std::process::id()),
        ..Origin::default()
    }
}

/// `url` as messages show it: without query, fragment or credentials.
pub fn shown(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

/// The HTTP client of a bridge: rustls with the ring provider, `localhost`
/// names on loopback without the system's resolver, and redirects followed
/// only within the server's own origin (a redirect to another host would
/// carry the session and the token there).
pub fn http_client() -> Result<reqwest::Client, BridgeError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .dns_resolver(resolve::LocalhostIsLoopback)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let first = attempt.previous().first().map(Url::origin);
            if attempt.previous().len() > 5 {
                attempt.error("more than 5 redirects")
            } else if first.is_some_and(|origin| origin != attempt.url().origin()) {
                let to = attempt.url().host_str().unwrap_or("?").to_owned();
                attempt.error(format!("refused a redirect to another host ({to})"))
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|source| BridgeError::Events(source.to_string()))
}
