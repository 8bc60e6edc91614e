//! `dev.elicitd.Broker1` at `/dev/elicitd/Broker`.

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, Origin, OriginDict, dict_str, dict_strings};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, Value};

use super::form_id;
use crate::core::state::Capabilities;
use crate::core::{Call, FrontendSpec, Remember, Reply};
use crate::driver::{Handle, info_dict, unexpected};

/// The broker's entry point: sessions, front-ends, control, observation.
#[derive(Debug)]
pub struct BrokerIface {
    broker: Handle,
}

impl BrokerIface {
    /// Serves through `broker`.
    pub fn new(broker: Handle) -> Self {
        BrokerIface { broker }
    }
}

/// Reads a front-end's registration options: `name`, `capabilities`,
/// `priority`.
fn frontend_spec(path: ObjectPath<'_>, options: &Dict) -> Result<FrontendSpec, Error> {
    let priority = match options.get("priority").map(|v| &**v) {
        None => 0,
        Some(Value::I32(p)) => *p,
        Some(_) => return Err(Error::BadArgument("option `priority` must be an i32".into())),
    };
    Ok(FrontendSpec {
        path: path.to_string(),
        name: dict_str(options, "name"),
        capabilities: Capabilities::from_names(dict_strings(options, "capabilities")),
        priority,
    })
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
        let origin = Origin::from_dict(&origin);
        origin.check_sizes().map_err(Error::LimitExceeded)?;
        match self.broker.call(&caller, Call::OpenSession(origin)).await? {
            Reply::Session { path, token } => Ok((object_path(path)?, token)),
            other => Err(unexpected(&other)),
        }
    }

    /// Re-attaches the caller to the session of `resume_token`.
    async fn resume_session(
        &self,
        #[zbus(header)] header: Header<'_>,
        resume_token: &str,
    ) -> Result<OwnedObjectPath, Error> {
        let _busy = self.broker.busy();
        let caller = self.broker.caller(header.sender()).await?;
        match self
            .broker
            .call(&caller, Call::ResumeSession(resume_token.to_owned()))
            .await?
        {
            Reply::Path(path) => object_path(path),
            other => Err(unexpected(&other)),
        }
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
        let call = Call::ProveSession {
            session: session.to_owned(),
            nonce,
        };
        match self.broker.call(&caller, call).await? {
            Reply::Challenge { proof, challenge } => Ok((proof, challenge)),
            other => Err(unexpected(&other)),
        }
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
        let call = Call::ResumeProven {
            session: session.to_owned(),
            proof,
        };
        match self.broker.call(&caller, call).await? {
            Reply::Path(path) => object_path(path),
            other => Err(unexpected(&other)),
        }
    }

    /// Registers the caller as a front-end served at `path`.
    async fn register_frontend(
        &self,
        #[zbus(header)] header: Header<'_>,
        path: ObjectPath<'_>,
        options: Dict,
    ) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        super::bounds::check_frontend_options(&options)?;
        let spec = frontend_spec(path, &options)?;
        self.broker.done(&caller, Call::RegisterFrontend(spec)).await
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
        super::bounds::check_frontend_options(&options)?;
        let spec = frontend_spec(path, &options)?;
        match self.broker.call(&caller, Call::OpenFrontend(spec)).await? {
            Reply::Registration { id, secret } => Ok((id, secret)),
            other => Err(unexpected(&other)),
        }
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
        let call = Call::ProveFrontend {
            registration: registration.to_owned(),
            nonce,
        };
        match self.broker.call(&caller, call).await? {
            Reply::Proof(proof) => Ok(proof),
            other => Err(unexpected(&other)),
        }
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
        super::bounds::check_frontend_options(&options)?;
        let call = Call::ResumeFrontend {
            spec: frontend_spec(path, &options)?,
            registration: registration.to_owned(),
        };
        self.broker.done(&caller, call).await
    }

    /// Sends `FormChanged` to the caller from now on, until it leaves.
    async fn watch(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.done(&caller, Call::Watch).await
    }

    /// Withdraws the caller's front-end registration.
    async fn unregister_frontend(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.done(&caller, Call::UnregisterFrontend).await
    }

    /// Pending forms with ids above `after` (0: from the first) as a JSON
    /// array, in id order, up to about 1 MiB; `more` says whether others
    /// follow. `brief` leaves out messages and field names.
    async fn list_forms_page(
        &self,
        #[zbus(header)] header: Header<'_>,
        after: u64,
        brief: bool,
    ) -> Result<(String, bool), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("list forms")?;
        let call = Call::ListFormsPage {
            after: (after > 0).then_some(after),
            brief,
        };
        match self.broker.call(&caller, call).await? {
            Reply::Page(page) => Ok((page.json, page.more)),
            other => Err(unexpected(&other)),
        }
    }

    /// Pending forms as a JSON array; refused when the list is over
    /// 16 MiB (`ListFormsPage` lists any number).
    async fn list_forms(&self, #[zbus(header)] header: Header<'_>) -> Result<String, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("list forms")?;
        match self.broker.call(&caller, Call::ListForms).await? {
            Reply::Json(json) => Ok(json),
            other => Err(unexpected(&other)),
        }
    }

    /// Takes over the head form of a session for a control client.
    async fn claim(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: &str,
    ) -> Result<(String, String, Dict), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        caller.unsandboxed("claim forms")?;
        match self.broker.call(&caller, Call::Claim(form_id(form)?)).await? {
            Reply::Claimed { token, request, info } => Ok((token, request.to_string(), info_dict(&info))),
            other => Err(unexpected(&other)),
        }
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
        let call = Call::Answer {
            form: form_id(form)?,
            token: token.to_owned(),
            action: action.to_owned(),
            content: content_json.to_owned(),
            remember,
        };
        self.broker.answer(&caller, call).await
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
        let call = Call::PassOn {
            form: form_id(form)?,
            token: token.to_owned(),
        };
        self.broker.done(&caller, call).await
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
        Ok(self.counts(header).await?.0 as u32)
    }

    /// Open sessions.
    #[zbus(property)]
    async fn sessions(&self, #[zbus(header)] header: Option<Header<'_>>) -> zbus::fdo::Result<u32> {
        Ok(self.counts(header).await?.1 as u32)
    }

    /// Registered front-ends.
    #[zbus(property)]
    async fn frontends(&self, #[zbus(header)] header: Option<Header<'_>>) -> zbus::fdo::Result<u32> {
        Ok(self.counts(header).await?.2 as u32)
    }
}

impl BrokerIface {
    /// Refuses a property read to anyone but the broker's own user.
    async fn owner_only(&self, header: Option<Header<'_>>) -> zbus::fdo::Result<crate::core::Caller> {
        let sender = header.as_ref().and_then(|h| h.sender());
        self.broker
            .caller(sender)
            .await
            .map_err(|error| zbus::fdo::Error::AccessDenied(error.detail()))
    }

    /// Pending forms, sessions and front-ends, for the broker's own user.
    async fn counts(&self, header: Option<Header<'_>>) -> zbus::fdo::Result<(usize, usize, usize)> {
        let caller = self.owner_only(header).await?;
        match self.broker.call(&caller, Call::Counts).await {
            Ok(Reply::Counts(pending, sessions, frontends)) => Ok((pending, sessions, frontends)),
            Ok(other) => Err(zbus::fdo::Error::Failed(unexpected(&other).detail())),
            Err(error) => Err(zbus::fdo::Error::Failed(error.detail())),
        }
    }
}
