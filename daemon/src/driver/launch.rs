//! A form nobody can show: start a front-end program for it, or tell the
//! owners of the forms that wait unseen where their user can answer.

use std::collections::HashSet;
use std::time::Duration;

use super::Driver;
use super::signals::Signal;

/// How long the notification server gets to say what it can: it may be
/// started by D-Bus activation for this very call. The driver waits on
/// it (a launch is rare, and the answer decides what starts), so it is
/// bounded.
const NOTIFICATIONS_PATIENCE: Duration = Duration::from_secs(1);

/// The notification server's well-known name, interface and path.
const NOTIFICATIONS: &str = "org.freedesktop.Notifications";
const NOTIFICATIONS_PATH: &str = "/org/freedesktop/Notifications";

impl Driver {
    /// `Effect::Launch`: a program for a form no front-end named in
    /// `unwanted` may show; where none can start, the owners of the forms
    /// that wait unseen hear it once per form.
    pub(super) async fn launch(&mut self, unwanted: HashSet<String>) {
        let notifications =
            self.launcher.needs_notifications(&unwanted) && notifications_with_actions(&self.conn).await;
        if self.launcher.ensure_running(&unwanted, notifications) {
            return;
        }
        let why = self.launcher.why_none(notifications);
        let unseen = self.core.unseen();
        // Bounded by the live forms: those no longer unseen are forgotten,
        // and told again should they wait unseen once more.
        self.told_unseen
            .retain(|form| unseen.iter().any(|u| u.form == *form));
        for form in unseen {
            if self.told_unseen.insert(form.form) {
                self.signals.send(Signal::Unseen(form, why.clone()));
            }
        }
    }
}

/// Whether a notification server runs (or can be started) on the bus of
/// `conn` that shows actions, the buttons `elicit-notify` answers with.
async fn notifications_with_actions(conn: &zbus::Connection) -> bool {
    let call = conn.call_method(
        Some(NOTIFICATIONS),
        NOTIFICATIONS_PATH,
        Some(NOTIFICATIONS),
        "GetCapabilities",
        &(),
    );
    let capabilities = match tokio::time::timeout(NOTIFICATIONS_PATIENCE, call).await {
        Ok(Ok(reply)) => reply
            .body()
            .deserialize::<Vec<String>>()
            .map_err(|e| e.to_string()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no reply within {NOTIFICATIONS_PATIENCE:?}")),
    };
    match capabilities {
        Ok(capabilities) => {
            let actions = capabilities.iter().any(|c| c == "actions");
            tracing::debug!(
                ?capabilities,
                actions,
                "asked the notification server what it can do"
            );
            actions
        }
        Err(error) => {
            tracing::debug!(%error, "no notification server");
            false
        }
    }
}
