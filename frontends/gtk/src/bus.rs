//! The D-Bus side, on the tokio runtime: serving `Frontend1`, registering
//! with the broker as `gtk`, answering, and opening URLs the user agreed to
//! open.

use std::collections::HashMap;
use std::path::PathBuf;

use async_channel::{Receiver, Sender};
use elicit_proto::dbus::{BUS_NAME, Broker1Proxy, Dict, FormChangedStream, Origin, dict_str};
use elicit_proto::trust::{FrontendRegistration, ProofError, TrustedBroker};
use elicit_proto::{Answer, ElicitationAction, Error};
use futures_util::{FutureExt, StreamExt};
use zbus::message::Header;
use zbus::zvariant::{OwnedValue, Str};
use zbus::{Connection, fdo, interface};

use crate::opener;

/// Where this front-end serves `dev.elicitd.Frontend1`.
pub const FRONTEND_PATH: &str = "/dev/elicitd/frontend/gtk";

/// The name this front-end registers with.
pub const FRONTEND_NAME: &str = "gtk";

/// A form the broker asked this front-end to show.
#[derive(Debug, Clone)]
pub struct ShowRequest {
    /// The broker's form id.
    pub form: String,
    /// The presentation token to answer with.
    pub token: String,
    /// The `elicitation/create` params as JSON text.
    pub request_json: String,
    /// Who asks.
    pub origin: Origin,
    /// The asking session's id.
    pub session: String,
}
// The queue time and deadline in `info` are not shown: a desktop window
// counting down is anything but calm.

/// What the bus tells the window.
#[derive(Debug)]
pub enum BusEvent {
    /// Show a form.
    Show(Box<ShowRequest>),
    /// Stop showing a form, for `reason`.
    Withdraw {
        /// The form id.
        form: String,
        /// `cancelled`, `client-gone`, `timeout`, `answered`, `claimed`, `closed`…
        reason: String,
    },
    /// Registered with the broker (again, after a restart).
    Registered,
    /// The broker is not there; forms will come once it is.
    BrokerGone(String),
    /// How many forms wait, queued behind the presented one, per session.
    Backlog(HashMap<String, usize>),
    /// The broker's reply to an answer (or the opener's failure).
    Answered {
        /// The form id.
        form: String,
        /// What was sent.
        action: ElicitationAction,
        /// Whether the broker took it.
        result: Result<(), AnswerError>,
    },
    /// The bus cannot be used at all: the program must end.
    Fatal(String),
}

/// What the window asks the bus side to do.
#[derive(Debug, Clone)]
pub enum Command {
    /// Send `answer` for `form`.
    Answer {
        /// The form id.
        form: String,
        /// Its presentation token.
        token: String,
        /// The answer.
        answer: Answer,
    },
    /// The user clicked "Open in browser": open `url`, then accept.
    OpenUrl {
        /// The form id.
        form: String,
        /// Its presentation token.
        token: String,
        /// The URL, exactly as the request gave it.
        url: String,
    },
}

/// Why an answer did not reach the broker.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The broker refused or could not be reached.
    #[error(transparent)]
    Broker(#[from] Error),
    /// The URL could not be opened, so nothing was sent.
    #[error("could not open the address: {0}")]
    Open(#[from] opener::OpenError),
}

/// Errors of the bus side.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// Connecting or serving failed.
    #[error("D-Bus: {0}")]
    Bus(#[from] zbus::Error),
}

/// The `Frontend1` object: it only forwards, so that `Show` returns at once
/// as the broker requires.
struct Frontend {
    /// Calls are taken from this broker alone (see `elicit_proto::trust`).
    trusted: TrustedBroker,
    events: Sender<BusEvent>,
}

#[interface(name = "dev.elicitd.Frontend1")]
impl Frontend {
    async fn show(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: String,
        token: String,
        request_json: String,
        info: Dict,
    ) -> fdo::Result<()> {
        // Only the broker this front-end registered with may show or
        // withdraw forms.
        self.trusted.check(&header)?;
        let request = ShowRequest {
            form,
            token,
            request_json,
            origin: Origin::from_dict(&info),
            session: dict_str(&info, "session").unwrap_or_default(),
        };
        self.events
            .send(BusEvent::Show(Box::new(request)))
            .await
            .map_err(|_| fdo::Error::Failed("the front-end is shutting down".into()))
    }

    async fn withdraw(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: String,
        reason: String,
    ) -> fdo::Result<()> {
        // Only the broker this front-end registered with may show or
        // withdraw forms.
        self.trusted.check(&header)?;
        // A closed channel means the window is gone; nothing to withdraw.
        let _ = self.events.send(BusEvent::Withdraw { form, reason }).await;
        Ok(())
    }
}

/// A connection serving `Frontend1`, registered with the broker.
#[derive(Clone)]
struct Link {
    conn: Connection,
    broker: Broker1Proxy<'static>,
    registration: FrontendRegistration,
}

impl Link {
    /// Connects to `address` (or the session bus), serves `Frontend1` and
    /// keeps it registered with the broker, across broker restarts.
    async fn start(address: Option<&str>, events: Sender<BusEvent>) -> Result<Link, BusError> {
        let builder = match address {
            Some(address) => zbus::connection::Builder::address(address)?,
            None => zbus::connection::Builder::session()?,
        };
        let conn = builder.build().await?;
        let registration = FrontendRegistration::default();
        let frontend = Frontend {
            trusted: registration.trusted(),
            events: events.clone(),
        };
        conn.object_server().at(FRONTEND_PATH, frontend).await?;
        let broker = Broker1Proxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let link = Link {
            conn,
            broker,
            registration,
        };
        // Subscribe before the first attempt, so that a broker starting in
        // between is not missed.
        let dbus = fdo::DBusProxy::new(&link.conn).await?;
        let mut owners = dbus
            .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
            .await?;
        let changes = link.broker.receive_form_changed().await?;
        link.register(&events).await;
        tokio::spawn(link.clone().watch_backlog(changes, events.clone()));
        let keeper = link.clone();
        tokio::spawn(async move {
            while let Some(change) = owners.next().await {
                let Ok(args) = change.args() else { continue };
                keeper.registration.distrust();
                let event = if args.new_owner().is_some() {
                    keeper.register(&events).await;
                    continue;
                } else {
                    BusEvent::BrokerGone("elicitd stopped; waiting for it to return".into())
                };
                if events.send(event).await.is_err() {
                    return;
                }
            }
        });
        Ok(link)
    }

    /// Keeps the per-session backlog current: every `FormChanged` may
    /// change it, and a burst of them is answered with one `ListForms`.
    async fn watch_backlog(self, mut changes: FormChangedStream, events: Sender<BusEvent>) {
        while changes.next().await.is_some() {
            while let Some(Some(_)) = changes.next().now_or_never() {}
            let Ok(json) = self.broker.list_forms().await else {
                continue;
            };
            if events.send(BusEvent::Backlog(backlog(&json))).await.is_err() {
                return;
            }
        }
    }

    async fn register(&self, events: &Sender<BusEvent>) {
        let event = match self.try_register().await {
            Ok(()) => BusEvent::Registered,
            Err(error) => BusEvent::BrokerGone(format!("cannot register with elicitd: {error}")),
        };
        let _ = events.send(event).await;
    }

    async fn try_register(&self) -> Result<(), ProofError> {
        let mut options = Dict::new();
        options.insert("name".into(), OwnedValue::from(Str::from(FRONTEND_NAME)));
        let capabilities = vec!["form", "url", "confirm"];
        let capabilities =
            OwnedValue::try_from(zbus::zvariant::Value::from(capabilities)).map_err(zbus::Error::from)?;
        options.insert("capabilities".into(), capabilities);
        options.insert("priority".into(), OwnedValue::from(20i32));
        self.registration
            .register(&self.conn, FRONTEND_PATH, options)
            .await?;
        // For the "N more waiting" count; forms are shown without it.
        let _ = self.broker.watch().await;
        Ok(())
    }

    /// Answers `form` with `token`; the broker's refusal comes back as a
    /// proto error (an invalid answer carries its field errors as JSON).
    async fn answer(&self, form: &str, token: &str, answer: &Answer) -> Result<(), Error> {
        let content = answer
            .content
            .as_ref()
            .map(serde_json::Value::to_string)
            .unwrap_or_default();
        self.broker
            .answer(form, token, action_name(&answer.action), &content)
            .await
            .map_err(Error::from_dbus)
    }
}

/// Runs the bus side until the window drops its command sender: serves
/// `Frontend1`, carries out `commands` and reports to `events`. Opening a
/// URL uses `opener` when given, else the portal or `xdg-open`.
pub async fn serve(
    address: Option<String>,
    opener: Option<PathBuf>,
    events: Sender<BusEvent>,
    commands: Receiver<Command>,
) {
    let link = match Link::start(address.as_deref(), events.clone()).await {
        Ok(link) => link,
        Err(error) => {
            let _ = events.send(BusEvent::Fatal(error.to_string())).await;
            return;
        }
    };
    while let Ok(command) = commands.recv().await {
        let link = link.clone();
        let events = events.clone();
        let opener = opener.clone();
        tokio::spawn(async move {
            let (form, action, result) = match command {
                Command::Answer { form, token, answer } => {
                    let result = link
                        .answer(&form, &token, &answer)
                        .await
                        .map_err(AnswerError::from);
                    (form, answer.action, result)
                }
                Command::OpenUrl { form, token, url } => {
                    let result = match opener::open(opener.as_deref(), &url).await {
                        Ok(()) => {
                            let accept = Answer::bare(ElicitationAction::Accept);
                            link.answer(&form, &token, &accept)
                                .await
                                .map_err(AnswerError::from)
                        }
                        Err(error) => Err(AnswerError::from(error)),
                    };
                    (form, ElicitationAction::Accept, result)
                }
            };
            let _ = events.send(BusEvent::Answered { form, action, result }).await;
        });
    }
    // The window is closing: its forms go on to another front-end at once
    // rather than when the connection drops.
    let _ = link.broker.unregister_frontend().await;
}

/// The action's name on the bus: `accept`, `decline` or `cancel`.
pub fn action_name(action: &ElicitationAction) -> &'static str {
    match action {
        ElicitationAction::Accept => "accept",
        ElicitationAction::Decline => "decline",
        _ => "cancel",
    }
}

/// Queued (not presented) forms per session, from `ListForms` JSON;
/// anything unreadable counts as nothing queued.
pub fn backlog(list_forms_json: &str) -> HashMap<String, usize> {
    let forms: Vec<serde_json::Value> = serde_json::from_str(list_forms_json).unwrap_or_default();
    let mut counts = HashMap::new();
    for form in &forms {
        if form["state"] == "queued"
            && let Some(session) = form["session"].as_str()
        {
            *counts.entry(session.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_counts_queued_forms_per_session() {
        let json = r#"[{"session":"a","state":"queued"},{"session":"a","state":"presented"},
            {"session":"a","state":"queued"},{"session":"b","state":"queued"}]"#;
        let counts = backlog(json);
        assert_eq!((counts["a"], counts["b"]), (2, 1));
        assert!(backlog("not json").is_empty());
    }
}
