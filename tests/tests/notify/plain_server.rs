//! A notification server without the `actions` capability. dunst always
//! has actions, so this one case uses a few lines of fake server: it
//! reports only `body` and records what it was asked to show.

use std::sync::{Arc, Mutex};

use elicit_tests::PrivateBus;
use zbus::zvariant::OwnedValue;

/// One `Notify` call, as received.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The title.
    pub summary: String,
    /// The text.
    pub body: String,
    /// key, label, key, label…
    pub actions: Vec<String>,
}

struct Iface {
    shown: Arc<Mutex<Vec<Shown>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Iface {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        _app_name: &str,
        _replaces_id: u32,
        _app_icon: &str,
        summary: &str,
        body: &str,
        actions: Vec<String>,
        _hints: std::collections::HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        shown.push(Shown {
            summary: summary.to_owned(),
            body: body.to_owned(),
            actions,
        });
        shown.len() as u32
    }

    fn close_notification(&self, _id: u32) {}

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("plain".into(), "elicitd tests".into(), "1".into(), "1.2".into())
    }
}

/// The fake server, serving as long as this value lives.
pub struct PlainServer {
    _conn: zbus::Connection,
    shown: Arc<Mutex<Vec<Shown>>>,
}

impl PlainServer {
    /// Serves `org.freedesktop.Notifications` on `bus`.
    pub async fn start(bus: &PrivateBus) -> PlainServer {
        let conn = bus.connect().await;
        let shown = Arc::new(Mutex::new(Vec::new()));
        conn.object_server()
            .at("/org/freedesktop/Notifications", Iface { shown: shown.clone() })
            .await
            .expect("serve the fake server");
        conn.request_name("org.freedesktop.Notifications")
            .await
            .expect("own the notification name");
        PlainServer { _conn: conn, shown }
    }

    /// Every notification shown so far.
    pub fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
