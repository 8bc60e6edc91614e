//! Reaching the broker: the session bus, a bus found by [`crate::discovery`],
//! or the daemon's asker socket.

use elicit_proto::Error;
use zbus::Connection;

/// The address form of elicitd's asker-only socket:
/// `elicitd-asker:path=/run/user/1000/elicitd/agents.sock`, or a forwarded
/// copy of it on another machine.
pub const ASKER_ADDRESS_PREFIX: &str = "elicitd-asker:path=";

/// Connects to `address`, or to the session bus when `None`; without
/// `DBUS_SESSION_BUS_ADDRESS`, to the bus that [`crate::discovery`] finds
/// elicitd on. An [`ASKER_ADDRESS_PREFIX`] address is the daemon's asker
/// socket: a peer-to-peer connection (no bus), `ANONYMOUS`, since the uid
/// of this side need not be the desktop's.
pub async fn connect(address: Option<&str>) -> Result<Connection, Error> {
    if let Some(path) = address.and_then(|a| a.strip_prefix(ASKER_ADDRESS_PREFIX)) {
        let stream = tokio::net::UnixStream::connect(path)
            .await
            .map_err(|e| Error::BadArgument(format!("cannot reach the asker socket {path}: {e}")))?;
        return Ok(zbus::connection::Builder::unix_stream(stream)
            .p2p()
            .auth_mechanism(zbus::AuthMechanism::Anonymous)
            .build()
            .await?);
    }
    let builder = match address {
        Some(address) => zbus::connection::Builder::address(address)?,
        None if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() => {
            return crate::discovery::connect_to_broker().await;
        }
        None => zbus::connection::Builder::session()?,
    };
    Ok(builder.build().await?)
}
