//! The link itself: served, registered, kept registered, answering.

use std::sync::Arc;

use elicit_proto::dbus::{BUS_NAME, Broker1Proxy};
use elicit_proto::text::escape_controls;
use elicit_proto::trust::{FrontendRegistration, ProofError};
use elicit_proto::{Action, Answer, Error};
use futures_util::StreamExt;
use zbus::Connection;
use zbus::fdo::{DBusProxy, NameOwnerChangedStream};

use crate::serve::Served;
use crate::{Frontend, LinkError, Observer, OwnerChange, Profile};

/// A connection serving `Frontend1`, registered with the broker. Clones
/// share the one registration.
#[derive(Clone)]
pub struct Link {
    conn: Connection,
    broker: Broker1Proxy<'static>,
    registration: FrontendRegistration,
    profile: Profile,
    observer: Arc<dyn Observer>,
}

impl Link {
    /// Connects to `address` (or the session bus), serves `Frontend1`
    /// there for `frontend` and keeps it registered as `profile` with the
    /// broker, across broker restarts, for as long as the link's
    /// connection lives. The first registration is tried before this
    /// returns; a broker that is not there yet is no error (`observer`
    /// hears it, and the link registers once the broker comes).
    pub async fn connect(
        address: Option<&str>,
        profile: Profile,
        frontend: impl Frontend,
        observer: impl Observer,
    ) -> Result<Link, LinkError> {
        let registration = FrontendRegistration::default();
        let served = Served {
            trusted: registration.trusted(),
            frontend: Arc::new(frontend),
        };
        // Served as the connection is built: an object server started on a
        // built connection runs in a task of its own, and a `Show` sent as
        // the registration is answered, before that task first ran on a
        // loaded machine, would be dropped unanswered.
        let conn = crate::startup::connect_serving(address, &profile.path(), served).await?;
        let broker = Broker1Proxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let link = Link {
            conn,
            broker,
            registration,
            profile,
            observer: Arc::new(observer),
        };
        // Subscribe before the first attempt, so that a broker starting in
        // between is not missed.
        let owners = DBusProxy::new(&link.conn)
            .await?
            .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
            .await?;
        let changes = if profile.backlog {
            Some(link.broker.receive_form_changed().await?)
        } else {
            None
        };
        link.register().await;
        if let Some(changes) = changes {
            let observer = link.observer.clone();
            tokio::spawn(crate::backlog::watch(link.broker.clone(), changes, observer));
        }
        tokio::spawn(link.clone().keep_registered(owners));
        Ok(link)
    }

    /// Follows the broker's name: the old owner is distrusted the moment it
    /// goes, and a new one is registered with (and must prove itself).
    async fn keep_registered(self, mut owners: NameOwnerChangedStream) {
        while let Some(change) = owners.next().await {
            let Ok(args) = change.args() else { continue };
            self.registration.distrust();
            let new_owner = args.new_owner().is_some();
            if args.old_owner().is_some() {
                let change = if new_owner {
                    OwnerChange::Replaced
                } else {
                    OwnerChange::Left
                };
                self.observer.broker_left(change);
            }
            if new_owner {
                self.register().await;
            }
        }
    }

    async fn register(&self) {
        match self.try_register().await {
            Ok(()) => self.observer.registered(),
            Err(error) => {
                let why = error.to_string();
                self.observer.not_registered(&escape_controls(&why));
            }
        }
    }

    async fn try_register(&self) -> Result<(), ProofError> {
        let options = self.profile.options()?;
        self.registration
            .register(&self.conn, &self.profile.path(), options)
            .await?;
        if self.profile.backlog {
            // Forms are shown without it; only the counts would be missing.
            let _ = self.broker.watch().await;
        }
        Ok(())
    }

    /// Answers form `form` with `token`; the broker's refusal comes back as
    /// a proto error (an invalid answer carries its field errors as JSON).
    pub async fn answer(&self, form: &str, token: &str, answer: &Answer) -> Result<(), Error> {
        let content = answer
            .content
            .as_ref()
            .map(serde_json::Value::to_string)
            .unwrap_or_default();
        let action = Action::from(&answer.action);
        self.broker
            .answer(form, token, action.as_str(), &content)
            .await
            .map_err(Error::from)
    }

    /// Hands form `form` to another front-end.
    pub async fn pass_on(&self, form: &str, token: &str) -> Result<(), Error> {
        self.broker.pass_on(form, token).await.map_err(Error::from)
    }

    /// Tells the broker this front-end is going, so its forms move on at
    /// once rather than when the connection drops.
    pub async fn unregister(&self) {
        // Leaving anyway: the broker also notices the connection drop.
        let _ = self.broker.unregister_frontend().await;
    }

    /// The connection the link serves on.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}
