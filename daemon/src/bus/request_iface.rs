//! `dev.elicitd.Request1` at `/dev/elicitd/session/<id>/form/<form>`.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::Dict;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;

use crate::broker::Broker;

/// One form, seen from its session's owner.
#[derive(Debug)]
pub struct RequestIface {
    broker: Arc<Broker>,
    form: u64,
}

impl RequestIface {
    /// The object of form `form`.
    pub fn new(broker: Arc<Broker>, form: u64) -> Self {
        RequestIface { broker, form }
    }
}

#[zbus::interface(name = "dev.elicitd.Request1")]
impl RequestIface {
    /// The owner has the outcome; the daemon forgets its content.
    async fn acknowledge(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.acknowledge(&caller, self.form).await
    }

    /// Withdraws the form.
    async fn close(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.close_form(&caller, self.form).await
    }

    /// The outcome, sent to the session owner alone.
    #[zbus(signal)]
    pub async fn response(
        emitter: &SignalEmitter<'_>,
        action: &str,
        content_json: &str,
        details: Dict,
    ) -> zbus::Result<()>;
}
