//! Noticing clients and front-ends that leave the bus.

use futures_util::StreamExt;

use crate::driver::Handle;

/// Feeds every unique name that leaves the bus to the broker, until the
/// connection closes.
pub async fn watch_departures(conn: zbus::Connection, broker: Handle) -> zbus::Result<()> {
    let dbus = zbus::fdo::DBusProxy::new(&conn).await?;
    let mut changes = dbus.receive_name_owner_changed().await?;
    while let Some(change) = changes.next().await {
        let Ok(args) = change.args() else { continue };
        if args.name().starts_with(':') && args.new_owner().is_none() {
            broker.name_lost(args.name());
        }
    }
    Ok(())
}
