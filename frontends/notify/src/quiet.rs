//! Do Not Disturb, as the desktop says it: KDE Plasma's notification
//! server has an `Inhibited` property; GNOME keeps the switch in GSettings
//! (`org.gnome.desktop.notifications show-banners`), which its settings
//! portal serves over the bus, so that no GSettings library is needed.
//!
//! It is asked before each notification rather than watched: a reminder
//! that comes after the user switched Do Not Disturb off is simply sent.
//! Anything that cannot be read counts as "not quiet": a notification
//! too many is better than a form that waits unseen.

use zbus::Connection;
use zbus::proxy::MethodFlags;
use zbus::zvariant::{OwnedValue, Value};

use crate::server::{NAME, PATH};

/// The settings portal's name, path and interface.
const PORTAL: &str = "org.freedesktop.portal.Desktop";
const PORTAL_PATH: &str = "/org/freedesktop/portal/desktop";
const SETTINGS: &str = "org.freedesktop.portal.Settings";

/// The desktop asks for quiet now.
pub async fn do_not_disturb(conn: &Connection) -> bool {
    kde_inhibited(conn).await == Some(true) || gnome_banners(conn).await == Some(false)
}

/// The notification server's `Inhibited` property (KDE Plasma, and any
/// server that copies it); `None` when it has none.
async fn kde_inhibited(conn: &Connection) -> Option<bool> {
    let properties = zbus::fdo::PropertiesProxy::builder(conn)
        .destination(NAME)
        .ok()?
        .path(PATH)
        .ok()?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .ok()?;
    let interface = zbus::names::InterfaceName::try_from(NAME).ok()?;
    let value = properties.get(interface, "Inhibited").await.ok()?;
    bool::try_from(value).ok()
}

/// GNOME's `show-banners`, through the settings portal; `None` where no
/// portal runs (it is not started for this: a desktop without one has no
/// GNOME setting to read) or it does not know the key.
async fn gnome_banners(conn: &Connection) -> Option<bool> {
    let proxy = zbus::Proxy::new(conn, PORTAL, PORTAL_PATH, SETTINGS).await.ok()?;
    let value: OwnedValue = proxy
        .call_with_flags(
            "Read",
            MethodFlags::NoAutoStart.into(),
            &("org.gnome.desktop.notifications", "show-banners"),
        )
        .await
        .ok()??;
    unwrap_variant(&value)
}

/// `Read` wraps the value in one variant more than `ReadOne` does; take
/// whichever came.
fn unwrap_variant(value: &Value<'_>) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Value(inner) => unwrap_variant(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_is_read_through_its_wrappings() {
        assert_eq!(unwrap_variant(&Value::Bool(false)), Some(false));
        let twice = Value::Value(Box::new(Value::Value(Box::new(Value::Bool(true)))));
        assert_eq!(unwrap_variant(&twice), Some(true));
        assert_eq!(unwrap_variant(&Value::from("no")), None);
    }
}
