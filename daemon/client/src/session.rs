//! One broker session: open it, submit forms, and wait for their outcome
//! across daemon restarts.

use std::collections::HashMap;
use std::time::Duration;

use elicit_proto::Error;
use elicit_proto::dbus::{BUS_NAME, Dict, Origin, OriginDict, Request1Proxy, Session1Proxy, dict_str};
use elicit_proto::trust;
use futures_util::StreamExt;
use serde_json::Value;
use zbus::zvariant::{OwnedObjectPath, Str};
use zbus::{Connection, MatchRule, MessageStream};

mod restart;

use restart::{POKE_AFTER, POKE_PATIENCE, daemon_went_away};

/// The outcome of one form, as its owner receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// accept, decline or cancel.
    pub action: String,
    /// The content, on accept in form mode.
    pub content: Option<Value>,
    /// Why (`answered`, `timeout`, a rule's reason …).
    pub reason: String,
    /// Who decided.
    pub answered_by: String,
}

/// What reached a session's owner about one of its forms.
#[derive(Debug, Clone, PartialEq)]
pub enum FormEvent {
    /// The form's outcome, acknowledged.
    Answered(OwnedObjectPath, Outcome),
    /// Nobody shows the form and no front-end program could be started
    /// for it; the text says why (`Request1.Unseen`).
    Unseen(OwnedObjectPath, String),
}

/// One broker session owned by this connection.
///
/// End it with [`ClientSession::close`]: acknowledgements are sent without
/// waiting, and only `close` confirms the last ones. A session merely
/// dropped with its connection may have its last form recorded as
/// undelivered, since the daemon can see the client leave before it reads
/// that acknowledgement.
pub struct ClientSession {
    conn: Connection,
    path: OwnedObjectPath,
    /// The session id, the last element of `path`.
    id: String,
    /// Never sent again after `OpenSession`: re-attaching proves it.
    resume_token: String,
    responses: MessageStream,
    daemon_changes: zbus::fdo::NameOwnerChangedStream,
    /// The unique name of the broker that proved it knows this session
    /// (or that opened it): only its signals are believed, since any
    /// client can send a `Response` signal to anyone, and any program can
    /// take the broker's name once elicitd is gone.
    daemon: Option<String>,
    /// Outcomes that arrived for other forms while waiting for one.
    early: HashMap<String, Outcome>,
    /// `Unseen` notices not yet handed over, oldest first, at most
    /// [`UNSEEN_KEPT`].
    unseen: std::collections::VecDeque<(String, String)>,
    /// Forms acknowledged without waiting for the reply, newest last.
    unconfirmed: Vec<OwnedObjectPath>,
    /// When to call the broker's name, which starts a daemon by D-Bus
    /// activation, if none has come back by then since the last one left.
    poke_at: Option<tokio::time::Instant>,
}

/// Where a session's forms live (`form_path`), the namespace of its
/// `Response`s: zbus matches a namespace by string prefix on this side, and
/// session 1's own path begins session 10's.
fn forms_namespace(session_path: &str) -> String {
    format!("{session_path}/form")
}

/// How many `Unseen` notices wait to be handed over; the broker sends one
/// per form, and an owner that never asks for them loses the oldest.
const UNSEEN_KEPT: usize = 64;

/// How many fire-and-forget acknowledgements [`ClientSession::close`]
/// confirms; older ones were processed long before.
const UNCONFIRMED_KEPT: usize = 64;

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSession")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl ClientSession {
    /// Opens a session that presents itself as `origin`.
    pub async fn open(conn: &Connection, origin: &Origin) -> Result<ClientSession, Error> {
        let dbus = zbus::fdo::DBusProxy::new(conn).await?;
        let daemon_changes = dbus
            .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
            .await?;
        // The reply's sender, not a later GetNameOwner: the broker that
        // issued the token is the one to believe.
        let ((path, resume_token), daemon) = open_session(conn, origin).await?;
        let id = path.as_str().rsplit('/').next().unwrap_or_default().to_owned();
        // Subscribe before the first submission: a policy may answer at
        // once. Every signal of the forms' interface: `Response`, `Unseen`.
        let rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface("dev.elicitd.Request1")?
            .path_namespace(forms_namespace(path.as_str()))?
            .build();
        let responses = MessageStream::for_match_rule(rule, conn, Some(256)).await?;
        Ok(ClientSession {
            conn: conn.clone(),
            path,
            id,
            resume_token,
            responses,
            daemon_changes,
            daemon: Some(daemon),
            early: HashMap::new(),
            unseen: std::collections::VecDeque::new(),
            unconfirmed: Vec::new(),
            poke_at: None,
        })
    }

    /// The session's object path.
    pub fn path(&self) -> &str {
        self.path.as_str()
    }

    /// Submits `request_json`; returns the form's request path.
    pub async fn submit(
        &self,
        request_json: &str,
        timeout_secs: Option<u64>,
        submission_id: Option<&str>,
    ) -> Result<OwnedObjectPath, Error> {
        let mut options = Dict::new();
        if let Some(timeout) = timeout_secs {
            options.insert("timeout".into(), timeout.into());
        }
        if let Some(id) = submission_id {
            options.insert("submission-id".into(), Str::from(id.to_owned()).into());
        }
        self.session_proxy()
            .await?
            .elicit(request_json, options)
            .await
            .map_err(Error::from)
    }

    /// Submits under the idempotency key `submission_id`, surviving a
    /// daemon that dies before it replies: the form may be stored and
    /// shown already, so instead of failing, this waits for the daemon to
    /// return (up to `patience`) and submits again under the same key,
    /// which gives back the form stored the first time rather than a
    /// second one. Other errors, and a daemon that stays away, are
    /// returned as they are.
    pub async fn submit_surviving_restart(
        &mut self,
        request_json: &str,
        timeout_secs: Option<u64>,
        submission_id: &str,
        patience: Duration,
    ) -> Result<OwnedObjectPath, Error> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            match self.submit(request_json, timeout_secs, Some(submission_id)).await {
                Err(error) if daemon_went_away(&error) && tokio::time::Instant::now() < deadline => {
                    tracing::info!(%error, "the broker went away during a submission; submitting again once it is back");
                    self.daemon = None;
                    // The form goes again only to a broker that proved it
                    // knows this session: an impostor holding the name
                    // meanwhile gets nothing, and the real one may return.
                    while self.daemon.is_none() && tokio::time::Instant::now() < deadline {
                        if self.until_daemon_changes(deadline).await {
                            // As `wait` does for a restart: prove, resume,
                            // confirm acknowledgements, have answers sent
                            // again. A failure shows in the next
                            // submission, or in `wait`, which believes no
                            // unproven broker.
                            let _ = self.reattach().await;
                        } else {
                            // A daemon that died before it replied comes
                            // back only when something calls its name, and
                            // nobody else may.
                            self.poke(deadline).await;
                        }
                    }
                }
                other => return other,
            }
        }
    }

    async fn session_proxy(&self) -> Result<Session1Proxy<'_>, Error> {
        Ok(Session1Proxy::builder(&self.conn)
            .path(self.path.clone())?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?)
    }

    /// Withdraws a form.
    pub async fn close_form(&self, form: &OwnedObjectPath) -> Result<(), Error> {
        request_proxy(&self.conn, form)
            .await?
            .close()
            .await
            .map_err(Error::from)
    }

    /// Waits for the outcome of `form` and acknowledges it; safe to cancel
    /// and call again. When the daemon
    /// restarts meanwhile, re-attaches and asks for redelivery, so that an
    /// answer given before the restart still arrives, once.
    pub async fn wait(&mut self, form: &OwnedObjectPath) -> Result<Outcome, Error> {
        loop {
            // Kept until the acknowledgement is sent, so that a caller
            // who abandons this future (a select, a cancellation) can wait
            // again and still get the outcome.
            if self.early.contains_key(form.as_str()) {
                return self.take_early(form).await;
            }
            self.next_signal().await?;
        }
    }

    /// Waits for the outcome of whichever form of this session is answered
    /// first (or was answered already) and acknowledges it, as
    /// [`ClientSession::wait`] does for one form. For an owner with several
    /// forms in flight at once.
    pub async fn wait_any(&mut self) -> Result<(OwnedObjectPath, Outcome), Error> {
        loop {
            let arrived = self.early.keys().next().cloned();
            if let Some(path) = arrived {
                let form = OwnedObjectPath::try_from(path).map_err(zbus::Error::from)?;
                let outcome = self.take_early(&form).await?;
                return Ok((form, outcome));
            }
            self.next_signal().await?;
        }
    }

    /// Waits for what comes next about this session's forms: an outcome
    /// (acknowledged, as [`ClientSession::wait_any`] does), or an
    /// `Unseen` notice, whichever arrived first.
    pub async fn wait_event(&mut self) -> Result<FormEvent, Error> {
        loop {
            if let Some((path, why)) = self.unseen.pop_front() {
                let form = OwnedObjectPath::try_from(path).map_err(zbus::Error::from)?;
                return Ok(FormEvent::Unseen(form, why));
            }
            let arrived = self.early.keys().next().cloned();
            if let Some(path) = arrived {
                let form = OwnedObjectPath::try_from(path).map_err(zbus::Error::from)?;
                let outcome = self.take_early(&form).await?;
                return Ok(FormEvent::Answered(form, outcome));
            }
            self.next_signal().await?;
        }
    }

    /// Acknowledges an outcome that arrived and hands it over.
    async fn take_early(&mut self, form: &OwnedObjectPath) -> Result<Outcome, Error> {
        // The outcome is here and durable in the daemon; its erasure need
        // not delay the caller, so the reply is not awaited. `close`
        // confirms it.
        request_proxy(&self.conn, form)
            .await?
            .inner()
            .call_noreply("Acknowledge", &())
            .await
            .map_err(Error::from)?;
        let outcome = self
            .early
            .remove(form.as_str())
            .ok_or_else(|| Error::NotFound(format!("no outcome of {}", form.as_str())))?;
        if self.unconfirmed.len() == UNCONFIRMED_KEPT {
            self.unconfirmed.remove(0);
        }
        self.unconfirmed.push(form.clone());
        Ok(outcome)
    }

    /// Takes the next `Response` from the daemon into `early`, or follows
    /// the daemon leaving and coming back.
    async fn next_signal(&mut self) -> Result<(), Error> {
        tokio::select! {
            message = self.responses.next() => {
                let Some(message) = message else {
                    return Err(Error::Bus(zbus::Error::InputOutput(std::io::Error::other("the bus connection closed").into())));
                };
                let message = message?;
                let header = message.header();
                // On the asker socket the one peer is the daemon.
                let from_daemon = !self.conn.is_bus()
                    || header.sender().map(|s| s.as_str()) == self.daemon.as_deref();
                let ours = format!("{}/", forms_namespace(self.path.as_str()));
                let Some(path) = header.path().map(|p| p.to_string()).filter(|p| p.starts_with(&ours)) else { return Ok(()) };
                if !from_daemon {
                    tracing::warn!(%path, "ignored a signal not sent by the broker");
                    return Ok(());
                }
                if header.member().is_some_and(|m| m.as_str() == "Unseen") {
                    let why: String = message.body().deserialize()?;
                    if self.unseen.len() == UNSEEN_KEPT {
                        self.unseen.pop_front();
                    }
                    self.unseen.push_back((path, why));
                    return Ok(());
                }
                if header.member().is_none_or(|m| m.as_str() != "Response") {
                    return Ok(());
                }
                let (action, content_json, details): (String, String, Dict) = message.body().deserialize()?;
                let content = match serde_json::from_str::<Value>(&content_json) {
                    Ok(Value::Null) | Err(_) => None,
                    Ok(value) => Some(value),
                };
                let outcome = Outcome {
                    action,
                    content,
                    reason: dict_str(&details, "reason").unwrap_or_default(),
                    answered_by: dict_str(&details, "answered-by").unwrap_or_default(),
                };
                self.early.insert(path, outcome);
            }
            change = self.daemon_changes.next() => {
                let Some(change) = change else { return Ok(()) };
                let Ok(args) = change.args() else { return Ok(()) };
                match args.new_owner().as_ref() {
                    // The broker already believed (the arrival of the one
                    // this session opened with, heard late): nothing changed.
                    Some(owner) if self.daemon.as_deref() == Some(owner.as_str()) => {}
                    Some(_) => {
                        // Nobody is believed until it proves itself.
                        self.daemon = None;
                        self.poke_at = None;
                        tracing::info!("the broker is back; re-attaching");
                        self.reattach().await?;
                    }
                    None => {
                        self.daemon = None;
                        self.poke_at = Some(tokio::time::Instant::now() + POKE_AFTER);
                        tracing::warn!("the broker left the bus; waiting for it to return");
                    }
                }
            }
            () = sleep_until(self.poke_at), if self.poke_at.is_some() && self.conn.is_bus() => {
                self.poke_at = None;
                // A daemon that left while this session's forms wait (one
                // that crashed, or a systemd stop racing an idle exit)
                // comes back only when something calls its name: this
                // session needs it, so it calls.
                self.poke(tokio::time::Instant::now() + POKE_PATIENCE).await;
                // Called again until an owner comes: a daemon started while
                // the one before still held the state directory may have
                // given up. The name's return clears this.
                self.poke_at = Some(tokio::time::Instant::now() + POKE_AFTER);
            }
        }
        Ok(())
    }

    /// Closes the session, cancelling what is left in it.
    pub async fn close(self) -> Result<(), Error> {
        // The daemon runs calls concurrently: an acknowledgement still in
        // flight could lose the race against `Close` and its form would be
        // recorded as undelivered. Acknowledging again and awaiting the
        // reply settles it: success or "no form" both mean it is gone.
        for form in &self.unconfirmed {
            if let Ok(proxy) = request_proxy(&self.conn, form).await {
                let _ = proxy.acknowledge().await;
            }
        }
        self.session_proxy().await?.close().await.map_err(Error::from)
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// How often `OpenSession` is sent when the daemon left without replying.
const OPEN_ATTEMPTS: usize = 3;

/// `OpenSession`, sent again when the broker left the bus without a reply:
/// a daemon exiting idle lets go of its name first and serves what reached
/// it before, but a call may still meet one on its way out (or one that
/// crashed). The next attempt starts a fresh daemon by D-Bus activation.
/// The reply's sender is the broker to believe.
async fn open_session(
    conn: &Connection,
    origin: &Origin,
) -> Result<((OwnedObjectPath, String), String), Error> {
    // The broker refuses an origin past its bounds; a client shortens its
    // own (a long command line, a server's long name) instead.
    let origin = origin.clone().fitted().to_dict();
    let mut attempt = 1;
    loop {
        match trust::call_broker(conn, "OpenSession", &(origin.clone(),)).await {
            Err(zbus::Error::MethodError(name, ..))
                if name.as_str() == "org.freedesktop.DBus.Error.NoReply" && attempt < OPEN_ATTEMPTS =>
            {
                tracing::info!("the broker left without replying to OpenSession; asking again");
                attempt += 1;
            }
            other => return other.map_err(Error::from),
        }
    }
}

async fn request_proxy<'a>(conn: &Connection, form: &'a OwnedObjectPath) -> Result<Request1Proxy<'a>, Error> {
    // No property cache: building one costs a GetAll and an AddMatch per
    // form, for an interface without properties.
    Ok(Request1Proxy::builder(conn)
        .path(form.as_ref())?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await?)
}
