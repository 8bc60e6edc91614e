//! The D-Bus side: serving `Frontend1`, registering with the broker, and
//! answering.

use std::collections::HashMap;

use elicit_proto::Error;
use elicit_proto::dbus::FormChangedStream;
use elicit_proto::dbus::{BUS_NAME, Broker1Proxy, Dict, Origin, dict_str, dict_u64};
use elicit_proto::trust::{FrontendRegistration, TrustedBroker};
use futures_util::{FutureExt, StreamExt};
use tokio::sync::mpsc::UnboundedSender;
use zbus::message::Header;
use zbus::zvariant::{OwnedValue, Str};
use zbus::{Connection, fdo, interface};

/// Where this front-end serves `dev.elicitd.Frontend1`.
pub const FRONTEND_PATH: &str = "/dev/elicitd/frontend/tui";

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
    /// When the form was queued, in ms since the epoch.
    pub queued_at_ms: u64,
    /// When it will be cancelled, in ms since the epoch; 0 for never.
    pub deadline_ms: u64,
}

/// What the bus tells the user interface.
#[derive(Debug, Clone)]
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
    /// Registered with the broker (again, after a restart): forms shown
    /// before are stale.
    Registered,
    /// The broker is not there; forms will come once it is.
    BrokerGone(String),
    /// How many forms wait, queued behind the presented one, per session.
    Backlog(HashMap<String, usize>),
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
    events: UnboundedSender<BusEvent>,
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
            queued_at_ms: dict_u64(&info, "queued-at-ms").unwrap_or(0),
            deadline_ms: dict_u64(&info, "deadline-ms").unwrap_or(0),
        };
        self.events
            .send(BusEvent::Show(Box::new(request)))
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
        // A closed channel means the UI is gone; nothing is left to withdraw.
        let _ = self.events.send(BusEvent::Withdraw { form, reason });
        Ok(())
    }
}

/// A connection serving `Frontend1`, registered with the broker.
#[derive(Clone)]
pub struct Link {
    conn: Connection,
    broker: Broker1Proxy<'static>,
    registration: FrontendRegistration,
}

impl Link {
    /// Connects to `address` (or the session bus), serves `Frontend1` and
    /// keeps it registered with the broker, across broker restarts, for as
    /// long as the returned link lives.
    pub async fn start(address: Option<&str>, events: UnboundedSender<BusEvent>) -> Result<Link, BusError> {
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
                if args.new_owner().is_some() {
                    keeper.register(&events).await;
                } else {
                    let _ = events.send(BusEvent::BrokerGone("elicitd stopped; waiting for it".into()));
                }
            }
        });
        Ok(link)
    }

    /// Keeps the per-session backlog current: every `FormChanged` may
    /// change it, and a burst of them is answered with one `ListForms`.
    async fn watch_backlog(self, mut changes: FormChangedStream, events: UnboundedSender<BusEvent>) {
        while changes.next().await.is_some() {
            while let Some(Some(_)) = changes.next().now_or_never() {}
            let Ok(json) = self.broker.list_forms().await else {
                continue;
            };
            if events.send(BusEvent::Backlog(backlog(&json))).is_err() {
                return;
            }
        }
    }

    async fn register(&self, events: &UnboundedSender<BusEvent>) {
        let event = match self.try_register().await {
            Ok(()) => BusEvent::Registered,
            Err(error) => BusEvent::BrokerGone(format!("cannot register with elicitd: {error}")),
        };
        let _ = events.send(event);
    }

    async fn try_register(&self) -> Result<(), elicit_proto::trust::ProofError> {
        let mut options = Dict::new();
        options.insert("name".into(), OwnedValue::from(Str::from("tui")));
        let capabilities = vec!["form", "url", "confirm"];
        let capabilities =
            OwnedValue::try_from(zbus::zvariant::Value::from(capabilities)).map_err(zbus::Error::from)?;
        options.insert("capabilities".into(), capabilities);
        options.insert("priority".into(), OwnedValue::from(10i32));
        self.registration
            .register(&self.conn, FRONTEND_PATH, options)
            .await?;
        // For the backlog counts; forms are shown without it.
        let _ = self.broker.watch().await;
        Ok(())
    }

    /// Answers form `form` with `token`; the broker's refusal comes back as
    /// a proto error (an invalid answer carries its field errors as JSON).
    pub async fn answer(&self, form: &str, token: &str, answer: &elicit_proto::Answer) -> Result<(), Error> {
        let content = answer
            .content
            .as_ref()
            .map(serde_json::Value::to_string)
            .unwrap_or_default();
        let action = crate::entry::action_name(&answer.action);
        self.broker
            .answer(form, token, action, &content)
            .await
            .map_err(Error::from_dbus)
    }

    /// Tells the broker this front-end is going, so its forms move on at
    /// once rather than when the connection drops.
    pub async fn unregister(&self) {
        // Leaving anyway: the broker also notices the connection drop.
        let _ = self.broker.unregister_frontend().await;
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
