//! `dev.elicitd.Session1` at `/dev/elicitd/session/<id>`.

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, dict_str, dict_u64};
use zbus::message::Header;
use zbus::zvariant::OwnedObjectPath;

use crate::core::{Call, ElicitOptions};
use crate::driver::Handle;

/// One client session; only its owner may call it.
#[derive(Debug)]
pub struct SessionIface {
    broker: Handle,
    session: String,
}

impl SessionIface {
    /// The object of session `session`.
    pub fn new(broker: Handle, session: String) -> Self {
        SessionIface { broker, session }
    }
}

#[zbus::interface(name = "dev.elicitd.Session1")]
impl SessionIface {
    /// Queues a form and returns its request object at once.
    async fn elicit(
        &self,
        #[zbus(header)] header: Header<'_>,
        request_json: &str,
        options: Dict,
    ) -> Result<OwnedObjectPath, Error> {
        let caller = self.broker.caller(header.sender()).await?;
        let options = ElicitOptions {
            timeout_secs: dict_u64(&options, "timeout"),
            submission_id: dict_str(&options, "submission-id"),
        };
        super::bounds::check_submission_id(options.submission_id.as_deref())?;
        let path = self
            .broker
            .elicit(&caller, &self.session, request_json, options)
            .await?;
        OwnedObjectPath::try_from(path).map_err(|e| Error::Bus(e.into()))
    }

    /// Emits `Response` again for every answered, undelivered form.
    async fn redeliver(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker
            .done(&caller, Call::Redeliver(self.session.clone()))
            .await
    }

    /// Closes the session and cancels its forms.
    async fn close(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker
            .done(&caller, Call::CloseSession(self.session.clone()))
            .await
    }
}
