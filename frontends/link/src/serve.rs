//! The `dev.elicitd.Frontend1` object on the bus: it checks the caller and
//! forwards to the front-end's [`Frontend`].

use std::sync::Arc;

use elicit_proto::dbus::Dict;
use elicit_proto::trust::TrustedBroker;
use zbus::message::Header;
use zbus::{fdo, interface};

use crate::{Frontend, ShowRequest};

/// Served at the profile's path. It only forwards, so that `Show` returns
/// at once as the broker requires.
pub(crate) struct Served {
    /// Calls are taken from this broker alone (see `elicit_proto::trust`).
    pub(crate) trusted: TrustedBroker,
    pub(crate) frontend: Arc<dyn Frontend>,
}

#[interface(name = "dev.elicitd.Frontend1")]
impl Served {
    async fn show(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: String,
        token: String,
        request_json: String,
        info: Dict,
    ) -> fdo::Result<()> {
        // Any program on the bus can call this object, and the current owner
        // of the broker's name may be an impostor.
        self.trusted.check(&header)?;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        if crate::frontend::is_stale(&info, now_ms) {
            return Err(fdo::Error::Failed(format!(
                "form {form} came after its reply time: the broker has given it elsewhere"
            )));
        }
        let request = ShowRequest::from_call(form, token, request_json, &info);
        self.frontend
            .show(request)
            .map_err(|refused| fdo::Error::Failed(refused.to_string()))
    }

    async fn withdraw(
        &self,
        #[zbus(header)] header: Header<'_>,
        form: String,
        reason: String,
    ) -> fdo::Result<()> {
        self.trusted.check(&header)?;
        self.frontend.withdraw(form, reason);
        Ok(())
    }
}
