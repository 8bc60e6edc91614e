//! `dev.elicitd.Broker1` at `/dev/elicitd/Broker`.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, Origin, dict_str};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath};

use super::form_id;
use crate::broker::{Broker, Remember};

/// The broker's entry point: sessions, front-ends, control, observation.
#[derive(Debug)]
pub struct BrokerIface {
    broker: Arc<Broker>,
}

impl BrokerIface {
    /// Serves `broker`.
    pub fn new(broker: Arc<Broker>) -> Self {
        BrokerIface { broker }
    }
}

fn object_path(path: String) -> Result<OwnedObjectPath, Error> {
    OwnedObjectPath::try_from(path).map_err(|e| Error::Bus(e.into()))
}

#[zbus::interface(name = "dev.elicitd.Broker1")]
impl BrokerIface {
    /// Opens a session for the caller: returns its path and resume token.
    async fn open_session(
        &self,
        #[zbus(header)] header: Header<'_>,
        origin: Dict,
    ) -> Result<(OwnedObjectPath, String), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        let (path, token) = self
            .broker
            .open_session(&caller, Origin::from_dict(&origin))
            .await?;
        Ok((object_path(path)?, token))
    }

    /// Re-attaches the caller to the session of `resume_token`.
    async fn resume_session(
        &self,
        #[zbus(header)] header: Header<'_>,
        resume_token: &str,
    ) -> Result<OwnedObjectPath, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        object_path(self.broker.resume_session(&caller, resume_token).await?)
    }

    /// Registers the caller as a front-end served at `path`.
    async fn register_frontend(
        &self,
        #[zbus(header)] header: Header<'_>,
        path: ObjectPath<'_>,
        options: Dict,
    ) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.register_frontend(&caller, path, &options)
    }

    /// Withdraws the caller's front-end registration.
    async fn unregister_frontend(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.unregister_frontend(&caller);
        Ok(())
    }

    /// Pending forms as a JSON array.
    async fn list_forms(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        self.broker.caller(header.sender()).await?;
        Ok(self.broker.list_forms().to_string())
    }

    /// Takes over the head form of a session for a control client.
    async fn claim(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: &str,
    ) -> Result<(String, String, Dict), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.claim(&caller, form_id(form)?)
    }

    /// Answers a presented form with its token.
    async fn answer(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: &str,
        token: &str,
        action: &str,
        content_json: &str,
    ) -> Result<(), Error> {
        self.answer_with(header, form, token, action, content_json, Dict::new())
            .await
    }

    /// Answers a presented form with its token and options: `remember`
    /// (s: `server` or `directory`) gives the same answer to that server's
    /// later forms without asking.
    async fn answer_with(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: &str,
        token: &str,
        action: &str,
        content_json: &str,
        options: Dict,
    ) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        let remember = Remember::parse(dict_str(&options, "remember").as_deref())?;
        self.broker
            .answer(&caller, form_id(form)?, token, action, content_json, remember)
            .await
    }

    /// Hands a presented form (held with its token) to the next-best
    /// front-end other than the caller, or to a started front-end program.
    async fn pass_on(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: &str,
        token: &str,
    ) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.pass_on(&caller, form_id(form)?, token)
    }

    /// Remembered choices as a JSON array.
    async fn list_remembered(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        self.broker.caller(header.sender()).await?;
        Ok(self.broker.remembered()?.to_string())
    }

    /// Forgets a remembered choice; false if there was none.
    async fn forget(&self, #[zbus(header)] header: Header<'_>, id: u64) -> Result<bool, Error> {
        self.broker.caller(header.sender()).await?;
        self.broker.forget(id)
    }

    /// The newest `limit` history records as a JSON array.
    async fn history(&self, #[zbus(header)] header: Header<'_>, limit: u32) -> Result<String, Error> {
        self.broker.caller(header.sender()).await?;
        let records = self.broker.history(limit as usize)?;
        serde_json::to_string(&records).map_err(|e| Error::Storage(e.to_string()))
    }

    /// A form changed state (for observers; no contents).
    #[zbus(signal)]
    async fn form_changed(
        emitter: &SignalEmitter<'_>,
        form: &str,
        session: &str,
        state: &str,
        reason: &str,
    ) -> zbus::Result<()>;

    /// The daemon's version.
    #[zbus(property)]
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_owned()
    }

    /// Forms queued or presented.
    #[zbus(property)]
    fn pending(&self) -> u32 {
        self.broker.counts().0 as u32
    }

    /// Open sessions.
    #[zbus(property)]
    fn sessions(&self) -> u32 {
        self.broker.counts().1 as u32
    }

    /// Registered front-ends.
    #[zbus(property)]
    fn frontends(&self) -> u32 {
        self.broker.counts().2 as u32
    }
}
