//! A scripted front-end: a real D-Bus peer that implements `Frontend1` and
//! hands each `Show` and `Withdraw` to the test, which answers as a human
//! would through `Broker1.Answer`.

use elicit_proto::dbus::{Broker1Proxy, Dict, dict_str};
use tokio::sync::mpsc;
use zbus::Connection;
use zbus::zvariant::{ObjectPath, Str, Value};

use crate::{PrivateBus, within};

/// A form as the front-end was given it.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The form id.
    pub form: String,
    /// The presentation token.
    pub token: String,
    /// The request JSON.
    pub request: serde_json::Value,
    /// The session id.
    pub session: String,
    /// The asking server, from the origin.
    pub server: Option<String>,
    /// The host it asks for, from the origin.
    pub host: Option<String>,
    /// The asker's icon name, from the origin.
    pub icon: Option<String>,
}

/// What the front-end was told.
#[derive(Debug, Clone)]
pub enum Event {
    /// A form to show.
    Show(Shown),
    /// A form to stop showing, and why.
    Withdraw(String, String),
}

struct Iface {
    events: mpsc::UnboundedSender<Event>,
}

#[zbus::interface(name = "dev.elicitd.Frontend1")]
impl Iface {
    fn show(&self, form: &str, token: &str, request_json: &str, info: Dict) {
        let _ = self.events.send(Event::Show(Shown {
            form: form.to_owned(),
            token: token.to_owned(),
            request: serde_json::from_str(request_json).unwrap_or_default(),
            session: dict_str(&info, "session").unwrap_or_default(),
            server: dict_str(&info, "server"),
            host: dict_str(&info, "host"),
            icon: dict_str(&info, "icon"),
        }));
    }

    fn withdraw(&self, form: &str, reason: &str) {
        let _ = self
            .events
            .send(Event::Withdraw(form.to_owned(), reason.to_owned()));
    }
}

/// A registered scripted front-end.
pub struct TestFrontend {
    conn: Connection,
    broker: Broker1Proxy<'static>,
    events: mpsc::UnboundedReceiver<Event>,
}

impl TestFrontend {
    /// Connects, serves `Frontend1` and registers as `name`.
    pub async fn register(bus: &PrivateBus, name: &str, priority: i32) -> TestFrontend {
        let (sender, events) = mpsc::unbounded_channel();
        let conn = bus.serve_at("/test/frontend", Iface { events: sender }).await;
        let mut options = Dict::new();
        options.insert("name".into(), Str::from(name.to_owned()).into());
        options.insert(
            "priority".into(),
            Value::from(priority).try_into().expect("i32 value"),
        );
        // One proxy for the front-end's life, without a property cache: a
        // human's answer costs one round trip, not three.
        let broker = Broker1Proxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .expect("broker proxy");
        let path = ObjectPath::try_from("/test/frontend").expect("path");
        within(
            "RegisterFrontend to reply",
            broker.register_frontend(&path, options),
        )
        .await
        .expect("register");
        TestFrontend { conn, broker, events }
    }

    /// The front-end's broker proxy, to answer from other tasks.
    pub fn broker(&self) -> Broker1Proxy<'static> {
        self.broker.clone()
    }

    /// The front-end's connection.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The next event.
    pub async fn next(&mut self) -> Event {
        within("a front-end event", self.events.recv())
            .await
            .expect("front-end channel open")
    }

    /// The next event within `deadline` (a real agent's start-up is slower
    /// than [`crate::DEADLINE`] allows for under load), `None` after it:
    /// the caller says what it waited for.
    pub async fn next_within(&mut self, deadline: std::time::Duration) -> Option<Event> {
        match tokio::time::timeout(deadline, self.events.recv()).await {
            Ok(Some(event)) => Some(event),
            Ok(None) => panic!("the front-end's channel closed"),
            Err(_) => None,
        }
    }

    /// The next `Show`, failing on anything else.
    pub async fn next_show(&mut self) -> Shown {
        match self.next().await {
            Event::Show(shown) => shown,
            other => panic!("expected Show, got {other:?}"),
        }
    }

    /// The next `Withdraw`, failing on anything else.
    pub async fn next_withdraw(&mut self) -> (String, String) {
        match self.next().await {
            Event::Withdraw(form, reason) => (form, reason),
            other => panic!("expected Withdraw, got {other:?}"),
        }
    }

    /// True when nothing is waiting (call after a barrier).
    pub fn is_idle(&mut self) -> bool {
        self.events.try_recv().is_err()
    }

    /// Answers a shown form.
    pub async fn answer(
        &self,
        shown: &Shown,
        action: &str,
        content: serde_json::Value,
    ) -> Result<(), elicit_proto::Error> {
        let content = if content.is_null() {
            String::new()
        } else {
            content.to_string()
        };
        self.broker
            .answer(&shown.form, &shown.token, action, &content)
            .await
            .map_err(elicit_proto::Error::from)
    }
}
