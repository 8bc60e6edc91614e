//! A minimal `org.kde.StatusNotifierWatcher` on the private bus, and a
//! reader of the items that register with it: what a tray host (Plasma's
//! system tray, waybar, the GNOME AppIndicator extension) sees of an item.
//!
//! Hand-written because none of the packaged watchers runs headless on a
//! private bus without its whole desktop shell (Plasma's lives in kded,
//! XFCE's in the panel, waybar needs a Wayland compositor). It implements
//! what the items use: `RegisterStatusNotifierItem`, the host's presence,
//! and the registered items.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use elicit_tests::{PrivateBus, eventually};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedValue, Value};

/// The watcher's name and path.
const NAME: &str = "org.kde.StatusNotifierWatcher";
const PATH: &str = "/StatusNotifierWatcher";
const ITEM: &str = "org.kde.StatusNotifierItem";

struct Iface {
    /// (bus name, object path) of each registered item.
    items: Arc<Mutex<Vec<(String, String)>>>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Iface {
    async fn register_status_notifier_item(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        service: &str,
    ) {
        // The spec's argument is a bus name (the item at
        // /StatusNotifierItem) or an object path on the caller.
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let (name, path) = if service.starts_with('/') {
            (sender, service.to_owned())
        } else {
            (service.to_owned(), "/StatusNotifierItem".to_owned())
        };
        let entry = format!("{name}{path}");
        self.items
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((name, path));
        let _ = Iface::status_notifier_item_registered(&emitter, &entry).await;
    }

    fn register_status_notifier_host(&self, _service: &str) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(name, path)| format!("{name}{path}"))
            .collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(signal)]
    async fn status_notifier_item_registered(emitter: &SignalEmitter<'_>, service: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn status_notifier_host_registered(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;
}

/// The watcher, serving while this value lives.
pub struct Watcher {
    conn: zbus::Connection,
    items: Arc<Mutex<Vec<(String, String)>>>,
}

/// A registered item, read as a tray host reads it.
pub struct Item {
    conn: zbus::Connection,
    name: String,
    path: String,
}

impl Watcher {
    /// Serves the watcher on `bus`.
    pub async fn start(bus: &PrivateBus) -> Watcher {
        let items = Arc::new(Mutex::new(Vec::new()));
        let conn = bus.serve_at(PATH, Iface { items: items.clone() }).await;
        conn.request_name(NAME).await.expect("own the watcher's name");
        let emitter = SignalEmitter::new(&conn, PATH).expect("emitter");
        Iface::status_notifier_host_registered(&emitter)
            .await
            .expect("announce the host");
        Watcher { conn, items }
    }

    /// Waits for the first item to register.
    pub async fn item(&self) -> Item {
        eventually("a status-notifier item to register", || async {
            !self.items.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
        })
        .await;
        let (name, path) = self.items.lock().unwrap_or_else(|p| p.into_inner())[0].clone();
        Item {
            conn: self.conn.clone(),
            name,
            path,
        }
    }
}

impl Item {
    async fn property(&self, path: &str, interface: &str, name: &str) -> Option<OwnedValue> {
        let reply = self
            .conn
            .call_method(
                Some(self.name.as_str()),
                path,
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &(interface, name),
            )
            .await
            .ok()?;
        reply.body().deserialize::<OwnedValue>().ok()
    }

    async fn string(&self, name: &str) -> String {
        self.property(&self.path, ITEM, name)
            .await
            .and_then(|value| String::try_from(value).ok())
            .unwrap_or_default()
    }

    /// `Passive`, `Active` or `NeedsAttention`.
    pub async fn status(&self) -> String {
        self.string("Status").await
    }

    /// The title.
    pub async fn title(&self) -> String {
        self.string("Title").await
    }

    /// The object path of the item's menu.
    async fn menu(&self) -> String {
        self.property(&self.path, ITEM, "Menu")
            .await
            .and_then(|value| zbus::zvariant::OwnedObjectPath::try_from(value).ok())
            .map(|path| path.to_string())
            .unwrap_or_default()
    }

    /// The menu's items: (id, label).
    pub async fn menu_items(&self) -> Vec<(i32, String)> {
        let menu = self.menu().await;
        let reply = self
            .conn
            .call_method(
                Some(self.name.as_str()),
                menu.as_str(),
                Some("com.canonical.dbusmenu"),
                "GetLayout",
                &(0i32, -1i32, Vec::<String>::new()),
            )
            .await
            .expect("GetLayout");
        type Layout = (u32, (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>));
        let (_, (_, _, children)): Layout = reply.body().deserialize().expect("a dbusmenu layout");
        children
            .iter()
            .filter_map(|child| {
                let Value::Structure(node) = &**child else {
                    return None;
                };
                let [Value::I32(id), Value::Dict(properties), ..] = node.fields() else {
                    return None;
                };
                let label: Option<String> = properties.get::<&str, String>(&"label").ok().flatten();
                Some((*id, label.unwrap_or_default()))
            })
            .collect()
    }

    /// Clicks the menu item whose label contains `text`, as a tray host
    /// does when the user picks it.
    pub async fn click(&self, text: &str) {
        let items = self.menu_items().await;
        let (id, _) = items
            .iter()
            .find(|(_, label)| label.contains(text))
            .unwrap_or_else(|| panic!("no menu item with {text:?} in {items:?}"));
        let menu = self.menu().await;
        self.conn
            .call_method(
                Some(self.name.as_str()),
                menu.as_str(),
                Some("com.canonical.dbusmenu"),
                "Event",
                &(*id, "clicked", Value::I32(0), 0u32),
            )
            .await
            .expect("dbusmenu Event");
    }
}
