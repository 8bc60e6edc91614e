//! `dev.elicitd.Request1` at `/dev/elicitd/session/<id>/form/<form>`.

use elicit_proto::Error;
use elicit_proto::dbus::Dict;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;

use crate::core::Call;
use crate::driver::Handle;

/// One form, seen from its session's owner.
#[derive(Debug)]
pub struct RequestIface {
    broker: Handle,
    form: u64,
}

impl RequestIface {
    /// The object of form `form`.
    pub fn new(broker: Handle, form: u64) -> Self {
        RequestIface { broker, form }
    }
}

#[zbus::interface(name = "dev.elicitd.Request1")]
impl RequestIface {
    /// The owner has the outcome; the daemon forgets its content.
    async fn acknowledge(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.done(&caller, Call::Acknowledge(self.form)).await
    }

    /// Withdraws the form.
    async fn close(&self, #[zbus(header)] header: Header<'_>) -> Result<(), Error> {
        let caller = self.broker.caller(header.sender()).await?;
        self.broker.done(&caller, Call::CloseForm(self.form)).await
    }

    /// The outcome, sent to the session owner alone.
    #[zbus(signal)]
    pub async fn response(
        emitter: &SignalEmitter<'_>,
        action: &str,
        content_json: &str,
        details: Dict,
    ) -> zbus::Result<()>;

    /// Nobody shows the form, and no front-end program could be started
    /// for it: `why` says why, for the owner to tell its user where to
    /// answer. Sent to the session owner alone, once while it waits so.
    #[zbus(signal)]
    pub async fn unseen(emitter: &SignalEmitter<'_>, why: &str) -> zbus::Result<()>;
}
