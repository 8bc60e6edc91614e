//! The desktop's dark or light preference, from the settings portal
//! (`org.freedesktop.portal.Settings`, key `org.freedesktop.appearance
//! color-scheme`), as GNOME, KDE and the other portal back-ends publish
//! it. libadwaita would do this for us; it is not used, so GTK 4's own
//! `gtk-application-prefer-dark-theme` setting follows the value instead.
//! Where there is no portal (or no such key) nothing happens: the theme's
//! own default stays.

use async_channel::Sender;
use futures_util::StreamExt;
use zbus::zvariant::{OwnedValue, Value};

use crate::bus::BusEvent;

const NAMESPACE: &str = "org.freedesktop.appearance";
const KEY: &str = "color-scheme";

#[zbus::proxy(
    interface = "org.freedesktop.portal.Settings",
    default_service = "org.freedesktop.portal.Desktop",
    default_path = "/org/freedesktop/portal/desktop"
)]
trait Settings {
    /// One setting (version 2 of the interface).
    fn read_one(&self, namespace: &str, key: &str) -> zbus::Result<OwnedValue>;

    /// One setting, wrapped in a variant once more (version 1).
    fn read(&self, namespace: &str, key: &str) -> zbus::Result<OwnedValue>;

    /// A setting changed.
    #[zbus(signal)]
    fn setting_changed(&self, namespace: &str, key: &str, value: Value<'_>) -> zbus::Result<()>;
}

/// Whether a `color-scheme` value asks for dark: 1 prefers dark, 2 light,
/// 0 has no preference (light, the themes' default).
fn prefers_dark(value: &Value<'_>) -> Option<bool> {
    match value {
        Value::U32(scheme) => Some(*scheme == 1),
        Value::Value(inner) => prefers_dark(inner),
        _ => None,
    }
}

/// Sends the preference to the window now and whenever it changes, for as
/// long as the session bus connection lasts. Every failure ends it quietly.
pub async fn follow(events: Sender<BusEvent>) {
    let Ok(conn) = zbus::Connection::session().await else {
        return;
    };
    // With its object server started, this connection answers any call
    // (a forged Show too) with an error instead of leaving it unanswered.
    let _ = conn.object_server();
    let Ok(settings) = SettingsProxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
    else {
        return;
    };
    // Subscribed before reading, so that a change in between is not lost.
    let Ok(mut changes) = settings.receive_setting_changed().await else {
        return;
    };
    let now = match settings.read_one(NAMESPACE, KEY).await {
        Ok(value) => Some(value),
        Err(_) => settings.read(NAMESPACE, KEY).await.ok(),
    };
    if let Some(dark) = now.as_deref().and_then(prefers_dark)
        && events.send(BusEvent::PreferDark(dark)).await.is_err()
    {
        return;
    }
    while let Some(change) = changes.next().await {
        let Ok(args) = change.args() else { continue };
        if args.namespace() != &NAMESPACE || args.key() != &KEY {
            continue;
        }
        if let Some(dark) = prefers_dark(args.value())
            && events.send(BusEvent::PreferDark(dark)).await.is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_asks_for_dark() {
        assert_eq!(prefers_dark(&Value::U32(1)), Some(true));
        assert_eq!(prefers_dark(&Value::U32(2)), Some(false));
        assert_eq!(prefers_dark(&Value::U32(0)), Some(false));
        assert_eq!(prefers_dark(&Value::Value(Box::new(Value::U32(1)))), Some(true));
        assert_eq!(prefers_dark(&Value::Str("dark".into())), None);
    }
}
