//! `dev.elicitd.Broker1` at `/dev/elicitd/Broker`.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, Origin, OriginDict, dict_str};
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
        let _busy = self.broker.busy();
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
        let _busy = self.broker.busy();
        let caller = self.broker.caller(header.sender()).await?;
        object_path(self.broker.resume_session(&caller, resume_token).await?)
    }

    /// Proves the broker knows `session`'s resume token: returns an HMAC
    /// over the caller's `nonce` and a challenge for `ResumeProven`.
    async fn prove_session(
        &self,
        #[zbus(header)] header: Header<'_>,
        session: &str,
        nonce: Vec<u8>,
    ) -> Result<(Vec<u8>, Vec<u8>), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.prove_session(&caller, session, &nonce)
    }

    /// Re-attaches the caller to `session` with its answer to the
    /// challenge of `ProveSession`: the resume token never crosses the bus.
    async fn resume_proven(
        &self,
        #[zbus(header)] header: Header<'_>,
        session: &str,
        proof: Vec<u8>,
    ) -> Result<OwnedObjectPath, Error> {
        let _busy = self.broker.busy();
        let caller = self.broker.caller(header.sender()).await?;
        object_path(self.broker.resume_proven(&caller, session, &proof).await?)
    }

    /// Registers the caller as a front-end served at `path`.
    async fn register_frontend(
        &self,
        #[zbus(header)] header: Header<'_>,
        path: ObjectPath<'_>,
        options: Dict,
    ) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("register as a front-end")?;
        self.broker.register_frontend(&caller, path, &options)
    }

    /// Registers the caller as a front-end and returns a registration id
    /// and secret, which the broker proves it knows (`ProveFrontend`)
    /// before the front-end believes it after a restart.
    async fn open_frontend(
        &self,
        #[zbus(header)] header: Header<'_>,
        path: ObjectPath<'_>,
        options: Dict,
    ) -> Result<(String, String), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.open_frontend(&caller, path, &options).await
    }

    /// Proves the broker knows `registration`'s secret: an HMAC over the
    /// caller's `nonce`.
    async fn prove_frontend(
        &self,
        #[zbus(header)] header: Header<'_>,
        registration: &str,
        nonce: Vec<u8>,
    ) -> Result<Vec<u8>, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.prove_frontend(&caller, registration, &nonce)
    }

    /// Registers the caller again under `registration`, after a restart.
    async fn resume_frontend(
        &self,
        #[zbus(header)] header: Header<'_>,
        path: ObjectPath<'_>,
        options: Dict,
        registration: &str,
    ) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.resume_frontend(&caller, path, &options, registration)
    }

    /// Sends `FormChanged` to the caller from now on, until it leaves.
    async fn watch(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.watch(&caller)
    }

    /// Withdraws the caller's front-end registration.
    async fn unregister_frontend(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.unregister_frontend(&caller);
        self.broker.drop_registrations(&caller.name);
        Ok(())
    }

    /// Pending forms as a JSON array.
    async fn list_forms(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("list forms")?;
        Ok(self.broker.list_forms().to_string())
    }

    /// Takes over the head form of a session for a control client.
    async fn claim(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: &str,
    ) -> Result<(String, String, Dict), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("claim forms")?;
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
        caller.unsandboxed("answer forms")?;
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
        caller.unsandboxed("pass forms on")?;
        self.broker.pass_on(&caller, form_id(form)?, token)
    }

    /// Remembered choices as a JSON array.
    async fn list_remembered(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("read remembered choices")?;
        Ok(self.broker.remembered()?.to_string())
    }

    /// Forgets a remembered choice; false if there was none.
    async fn forget(&self, #[zbus(header)] header: Header<'_>, id: u64) -> Result<bool, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("change remembered choices")?;
        self.broker.forget(id).await
    }

    /// The newest `limit` history records as a JSON array.
    async fn history(&self, #[zbus(header)] header: Header<'_>, limit: u32) -> Result<String, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("read history")?;
        let records = self.broker.history(limit as usize).await?;
        serde_json::to_string(&records).map_err(|e| Error::Storage(e.to_string()))
    }

    /// A form changed state (for observers; no contents).
    #[zbus(signal)]
    pub async fn form_changed(
        emitter: &SignalEmitter<'_>,
        form: &str,
        session: &str,
        state: &str,
        reason: &str,
    ) -> zbus::Result<()>;

    /// The daemon's version.
    #[zbus(property)]
    async fn version(&self, #[zbus(header)] header: Option<Header<'_>>) -> zbus::fdo::Result<String> {
        self.owner_only(header).await?;
        Ok(env!("CARGO_PKG_VERSION").to_owned())
    }

    /// Forms queued or presented.
    #[zbus(property)]
    async fn pending(&self, #[zbus(header)] header: Option<Header<'_>>) -> zbus::fdo::Result<u32> {
        self.owner_only(header).await?;
        Ok(self.broker.counts().0 as u32)
    }

    /// Open sessions.
    #[zbus(property)]
    async fn sessions(&self, #[zbus(header)] header: Option<Header<'_>>) -> zbus::fdo::Result<u32> {
        self.owner_only(header).await?;
        Ok(self.broker.counts().1 as u32)
    }

    /// Registered front-ends.
    #[zbus(property)]
    async fn frontends(&self, #[zbus(header)] header: Option<Header<'_>>) -> zbus::fdo::Result<u32> {
        self.owner_only(header).await?;
        Ok(self.broker.counts().2 as u32)
    }
}

impl BrokerIface {
    /// Refuses a property read to anyone but the broker's own user.
    async fn owner_only(&self, header: Option<Header<'_>>) -> zbus::fdo::Result<()> {
        let sender = header.as_ref().and_then(|h| h.sender());
        self.broker
            .caller(sender)
            .await
            .map(drop)
            .map_err(|error| zbus::fdo::Error::AccessDenied(error.detail()))
    }
}
