//! A real `org.kde.StatusNotifierWatcher` on the private bus,
//! `status-notifier-watcher` (Debian's haskell-status-notifier-item-utils,
//! the watcher of the gtk-sni-tray and taffybar trays, which runs headless),
//! and a reader of the items that register with it: what a tray host
//! (Plasma's system tray, waybar, the GNOME AppIndicator extension) sees of
//! an item.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};

use elicit_tests::{PrivateBus, eventually};
use zbus::zvariant::{OwnedValue, Value};

/// The watcher's name and path.
const NAME: &str = "org.kde.StatusNotifierWatcher";
const PATH: &str = "/StatusNotifierWatcher";
const ITEM: &str = "org.kde.StatusNotifierItem";

/// The watcher, running while this value lives.
pub struct Watcher {
    /// `None` for a watcher this value did not start (KDE's, in kded5).
    child: Option<Child>,
    conn: zbus::Connection,
}

/// A registered item, read as a tray host reads it.
pub struct Item {
    conn: zbus::Connection,
    name: String,
    path: String,
}

impl Watcher {
    /// Starts the watcher on `bus`; returns once it owns its name.
    pub async fn start(bus: &PrivateBus) -> Watcher {
        let child = Command::new("status-notifier-watcher")
            .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("status-notifier-watcher starts (install haskell-status-notifier-item-utils)");
        Watcher::attach(bus, Some(child)).await
    }

    /// Reads the watcher that `child` (or, when `None`, someone else)
    /// started on `bus`; returns once it owns its name.
    pub async fn attach(bus: &PrivateBus, child: Option<Child>) -> Watcher {
        let conn = bus.connect().await;
        let watcher = Watcher { child, conn };
        eventually("the watcher to own its name", || async {
            let Ok(dbus) = zbus::fdo::DBusProxy::new(&watcher.conn).await else {
                return false;
            };
            let Ok(name) = zbus::names::BusName::try_from(NAME) else {
                return false;
            };
            dbus.name_has_owner(name).await.unwrap_or(false)
        })
        .await;
        watcher
    }

    /// The items registered with the watcher: `NAME` or `NAME/PATH`.
    pub async fn registered(&self) -> Vec<String> {
        let reply = self
            .conn
            .call_method(
                Some(NAME),
                PATH,
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &(NAME, "RegisteredStatusNotifierItems"),
            )
            .await;
        let Ok(reply) = reply else { return Vec::new() };
        reply
            .body()
            .deserialize::<OwnedValue>()
            .ok()
            .and_then(|value| Vec::<String>::try_from(value).ok())
            .unwrap_or_default()
    }

    /// Waits for the first item to register.
    pub async fn item(&self) -> Item {
        eventually("a status-notifier item to register", || async {
            !self.registered().await.is_empty()
        })
        .await;
        let entry = self.registered().await.remove(0);
        let (name, path) = match entry.find('/') {
            Some(slash) => (entry[..slash].to_owned(), entry[slash..].to_owned()),
            None => (entry, "/StatusNotifierItem".to_owned()),
        };
        Item {
            conn: self.conn.clone(),
            name,
            path,
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
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
