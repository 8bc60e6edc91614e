//! The elicitd side: serving `Frontend1`, staying registered as `notify`,
//! answering and passing forms on.

use elicit_proto::Error;
use elicit_proto::dbus::{BUS_NAME, Broker1Proxy, Dict, Origin};
use elicit_proto::trust::{FrontendRegistration, ProofError, TrustedBroker};
use futures_util::StreamExt;
use tokio::sync::mpsc::UnboundedSender;
use zbus::message::Header;
use zbus::zvariant::{OwnedValue, Str, Value};
use zbus::{Connection, fdo, interface};

/// Where this front-end serves `dev.elicitd.Frontend1`.
pub const FRONTEND_PATH: &str = "/dev/elicitd/frontend/notify";

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
}

/// What the broker tells the front-end.
#[derive(Debug, Clone)]
pub enum BrokerEvent {
    /// Show a form.
    Show(Box<ShowRequest>),
    /// Stop showing a form.
    Withdraw(String),
    /// The broker left the bus (or was replaced): forms shown are stale.
    /// Always sent before registering with a new broker, whose `Show`
    /// calls then follow.
    Gone,
}

/// The `Frontend1` object: it only forwards, so that `Show` returns at once
/// as the broker requires.
struct Frontend {
    /// Calls are taken from this broker alone (see `elicit_proto::trust`).
    trusted: TrustedBroker,
    events: UnboundedSender<BrokerEvent>,
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
        };
        self.events
            .send(BrokerEvent::Show(Box::new(request)))
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
        let _ = reason;
        // A closed channel means the front-end is going; nothing is left
        // to close.
        let _ = self.events.send(BrokerEvent::Withdraw(form));
        Ok(())
    }
}

/// The connection's tie to the broker.
#[derive(Clone)]
pub struct Link {
    conn: Connection,
    broker: Broker1Proxy<'static>,
    registration: FrontendRegistration,
}

impl Link {
    /// Serves `Frontend1` on `conn` and keeps it registered with the
    /// broker, across broker restarts, for as long as `conn` lives.
    pub async fn start(conn: &Connection, events: UnboundedSender<BrokerEvent>) -> zbus::Result<Link> {
        let registration = FrontendRegistration::default();
        let frontend = Frontend {
            trusted: registration.trusted(),
            events: events.clone(),
        };
        conn.object_server().at(FRONTEND_PATH, frontend).await?;
        let broker = Broker1Proxy::builder(conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let link = Link {
            conn: conn.clone(),
            broker,
            registration,
        };
        // Subscribe before the first attempt, so that a broker starting in
        // between is not missed.
        let dbus = fdo::DBusProxy::new(conn).await?;
        let mut owners = dbus
            .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
            .await?;
        link.register().await;
        let keeper = link.clone();
        tokio::spawn(async move {
            while let Some(change) = owners.next().await {
                let Ok(args) = change.args() else { continue };
                keeper.registration.distrust();
                if args.old_owner().is_some() && events.send(BrokerEvent::Gone).is_err() {
                    return;
                }
                if args.new_owner().is_some() {
                    keeper.register().await;
                }
            }
        });
        Ok(link)
    }

    /// Registers; a broker that is not there yet is no error: the owner
    /// watch registers once it comes.
    async fn register(&self) {
        if let Err(error) = self.try_register().await {
            eprintln!("elicit-notify: cannot register with elicitd (waiting for it): {error}");
        }
    }

    async fn try_register(&self) -> Result<(), ProofError> {
        let mut options = Dict::new();
        options.insert("name".into(), OwnedValue::from(Str::from("notify")));
        // Every form: what a notification cannot hold, it hands on with
        // "Open…".
        let capabilities = vec!["form", "url", "confirm"];
        let capabilities = OwnedValue::try_from(Value::from(capabilities)).map_err(zbus::Error::from)?;
        options.insert("capabilities".into(), capabilities);
        // Below elicit-tui (10): without a preference list, a terminal
        // that is open is the better place to answer.
        options.insert("priority".into(), OwnedValue::from(5i32));
        self.registration
            .register(&self.conn, FRONTEND_PATH, options)
            .await
    }

    /// Answers form `form` with `token`.
    pub async fn answer(&self, form: &str, token: &str, answer: &elicit_proto::Answer) -> Result<(), Error> {
        let content = answer
            .content
            .as_ref()
            .map(serde_json::Value::to_string)
            .unwrap_or_default();
        let action = match answer.action {
            elicit_proto::ElicitationAction::Accept => "accept",
            elicit_proto::ElicitationAction::Decline => "decline",
            _ => "cancel",
        };
        self.broker
            .answer(form, token, action, &content)
            .await
            .map_err(Error::from_dbus)
    }

    /// Hands form `form` to another front-end.
    pub async fn pass_on(&self, form: &str, token: &str) -> Result<(), Error> {
        self.broker.pass_on(form, token).await.map_err(Error::from_dbus)
    }

    /// Tells the broker this front-end is going, so its forms move on at
    /// once rather than when the connection drops.
    pub async fn unregister(&self) {
        // Leaving anyway: the broker also notices the connection drop.
        let _ = self.broker.unregister_frontend().await;
    }
}
