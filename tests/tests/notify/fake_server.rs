//! A notification server the test controls, for what dunst cannot show:
//! a server without the `actions` capability (dunst always has it), and
//! a server replaced by another one mid-test. It records what it is asked
//! to show and emits `ActionInvoked` on request, from its own connection,
//! to the notification's sender alone, as dunst does.

use std::sync::{Arc, Mutex};

use elicit_tests::PrivateBus;
use zbus::message::Header;
use zbus::zvariant::OwnedValue;

/// One `Notify` call, as received.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The id the server gave it.
    pub id: u32,
    /// Who sent it (where the signals go).
    pub sender: String,
    /// The title.
    pub summary: String,
    /// The text.
    pub body: String,
    /// key, label, key, label…
    pub actions: Vec<String>,
    /// The `urgency` hint: 0 low, 1 normal, 2 critical.
    pub urgency: Option<u8>,
}

struct Iface {
    shown: Arc<Mutex<Vec<Shown>>>,
    capabilities: Vec<String>,
    first_id: u32,
    /// Do Not Disturb, as KDE Plasma's server says it.
    inhibited: bool,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Iface {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        #[zbus(header)] header: Header<'_>,
        _app_name: &str,
        _replaces_id: u32,
        _app_icon: &str,
        summary: &str,
        body: &str,
        actions: Vec<String>,
        hints: std::collections::HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        let id = self.first_id + shown.len() as u32;
        shown.push(Shown {
            id,
            sender: header.sender().map(|s| s.to_string()).unwrap_or_default(),
            summary: summary.to_owned(),
            body: body.to_owned(),
            actions,
            urgency: hints.get("urgency").and_then(|u| u8::try_from(u).ok()),
        });
        id
    }

    fn close_notification(&self, _id: u32) {}

    fn get_capabilities(&self) -> Vec<String> {
        self.capabilities.clone()
    }

    #[zbus(property)]
    fn inhibited(&self) -> bool {
        self.inhibited
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("fake".into(), "elicitd tests".into(), "1".into(), "1.2".into())
    }
}

/// The fake server, serving as long as this value lives.
pub struct FakeServer {
    conn: zbus::Connection,
    shown: Arc<Mutex<Vec<Shown>>>,
}

impl FakeServer {
    /// Serves `org.freedesktop.Notifications` on `bus` with
    /// `capabilities`, numbering notifications from `first_id`.
    pub async fn start(bus: &PrivateBus, capabilities: &[&str], first_id: u32) -> FakeServer {
        FakeServer::start_as(bus, capabilities, first_id, false).await
    }

    /// As [`FakeServer::start`], in Do Not Disturb (`Inhibited`, as KDE
    /// Plasma's server has it).
    pub async fn start_inhibited(bus: &PrivateBus, capabilities: &[&str]) -> FakeServer {
        FakeServer::start_as(bus, capabilities, 1, true).await
    }

    async fn start_as(bus: &PrivateBus, capabilities: &[&str], first_id: u32, inhibited: bool) -> FakeServer {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let iface = Iface {
            shown: shown.clone(),
            capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
            first_id,
            inhibited,
        };
        let conn = bus.serve_at("/org/freedesktop/Notifications", iface).await;
        conn.request_name("org.freedesktop.Notifications")
            .await
            .expect("own the notification name");
        FakeServer { conn, shown }
    }

    /// Every notification shown so far.
    pub fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The user chose action `key` of `notification`.
    pub async fn invoke(&self, notification: &Shown, key: &str) {
        self.conn
            .emit_signal(
                Some(notification.sender.as_str()),
                "/org/freedesktop/Notifications",
                "org.freedesktop.Notifications",
                "ActionInvoked",
                &(notification.id, key),
            )
            .await
            .expect("emit ActionInvoked");
    }
}
