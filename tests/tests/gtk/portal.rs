//! A settings portal (`org.freedesktop.portal.Settings`) on the test's
//! bus, saying the desktop's colour scheme as GNOME's or KDE's does.

use elicit_tests::PrivateBus;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedValue, Value};

const PATH: &str = "/org/freedesktop/portal/desktop";

struct Settings {
    color_scheme: u32,
}

#[zbus::interface(name = "org.freedesktop.portal.Settings")]
impl Settings {
    fn read_one(&self, namespace: &str, key: &str) -> zbus::fdo::Result<OwnedValue> {
        if (namespace, key) == ("org.freedesktop.appearance", "color-scheme") {
            Ok(OwnedValue::from(self.color_scheme))
        } else {
            Err(zbus::fdo::Error::Failed("no such setting".into()))
        }
    }

    #[zbus(signal)]
    async fn setting_changed(
        emitter: &SignalEmitter<'_>,
        namespace: &str,
        key: &str,
        value: Value<'_>,
    ) -> zbus::Result<()>;
}

/// Serves the portal with `color_scheme` (0 none, 1 dark, 2 light).
pub async fn serve(bus: &PrivateBus, color_scheme: u32) -> zbus::Connection {
    let conn = bus.serve_at(PATH, Settings { color_scheme }).await;
    conn.request_name("org.freedesktop.portal.Desktop")
        .await
        .expect("own the portal's name");
    conn
}

/// The user switched the desktop to `color_scheme`.
pub async fn change(conn: &zbus::Connection, color_scheme: u32) {
    let iface = conn
        .object_server()
        .interface::<_, Settings>(PATH)
        .await
        .expect("the portal is served");
    iface.get_mut().await.color_scheme = color_scheme;
    Settings::setting_changed(
        iface.signal_emitter(),
        "org.freedesktop.appearance",
        "color-scheme",
        Value::U32(color_scheme),
    )
    .await
    .expect("emit SettingChanged");
}
