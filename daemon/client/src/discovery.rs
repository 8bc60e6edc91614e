//! Finding the user's broker when the environment does not say.
//!
//! MCP hosts start servers with a filtered environment (the Python SDK,
//! fastmcp, fast-agent and the Inspector pass little more than `HOME`,
//! `PATH` and `USER`), so a proxy often runs without
//! `DBUS_SESSION_BUS_ADDRESS`. It then tries, in order:
//!
//! 1. `$XDG_RUNTIME_DIR/bus`, when the variable is set;
//! 2. `/run/user/UID/bus`, the systemd session bus;
//! 3. the address in the daemon's record,
//!    [`elicit_proto::paths::bus_record`]:
//!    `$HOME/.local/state/elicitd/bus.UID`, a path derived from the uid and
//!    `$HOME` alone, since hosts pass at least those.
//!
//! The first bus on which elicitd runs (or can be activated) wins. The
//! daemon writes the record (mode 0600) once it owns its name and removes
//! it when it stops; a record left by a crash names a bus that is gone or
//! has no broker, and is passed over. A record not owned by the user, or
//! writable by others, is never believed: it could send forms elsewhere.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use elicit_proto::Error;
use elicit_proto::dbus::BUS_NAME;
use zbus::Connection;

/// The address in the record, when the record can be believed.
pub fn read_record(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let uid = rustix::process::getuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "{} belongs to uid {}, not {uid}",
            path.display(),
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(format!("{} is writable by others", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let address = text.trim();
    if address.is_empty() {
        return Err(format!("{} is empty", path.display()));
    }
    Ok(address.to_owned())
}

/// The candidates, in order, each with where it came from.
pub fn candidates() -> Vec<(String, Result<String, String>)> {
    let mut out = Vec::new();
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        let socket = Path::new(&dir).join("bus");
        out.push(("$XDG_RUNTIME_DIR/bus".to_owned(), socket_address(&socket)));
    }
    let uid = rustix::process::getuid().as_raw();
    let socket = PathBuf::from(format!("/run/user/{uid}/bus"));
    out.push((socket.display().to_string(), socket_address(&socket)));
    match elicit_proto::paths::bus_record() {
        Some(path) => out.push((format!("the record {}", path.display()), read_record(&path))),
        None => out.push(("the record".to_owned(), Err("no home directory".to_owned()))),
    }
    out
}

fn socket_address(socket: &Path) -> Result<String, String> {
    if !socket.exists() {
        return Err(format!("{} does not exist", socket.display()));
    }
    Ok(format!("unix:path={}", socket.display()))
}

/// Connects to the first candidate bus on which elicitd runs or can be
/// activated. The error lists what was tried and why each failed.
pub async fn connect_to_broker() -> Result<Connection, Error> {
    let mut tried = Vec::new();
    for (source, address) in candidates() {
        let address = match address {
            Ok(address) => address,
            Err(why) => {
                tried.push(why);
                continue;
            }
        };
        match connect_if_broker(&address).await {
            Ok(conn) => {
                tracing::debug!(%source, %address, "found the broker");
                return Ok(conn);
            }
            Err(why) => tried.push(format!("{source} ({address}): {why}")),
        }
    }
    Err(Error::Bus(zbus::Error::Address(format!(
        "DBUS_SESSION_BUS_ADDRESS is not set and no bus with elicitd was found; tried {}",
        tried.join("; ")
    ))))
}

async fn connect_if_broker(address: &str) -> Result<Connection, String> {
    let conn = zbus::connection::Builder::address(address)
        .map_err(|e| e.to_string())?
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let dbus = zbus::fdo::DBusProxy::new(&conn)
        .await
        .map_err(|e| e.to_string())?;
    let name = zbus::names::BusName::try_from(BUS_NAME).map_err(|e| e.to_string())?;
    if dbus.name_has_owner(name.clone()).await.unwrap_or(false) {
        return Ok(conn);
    }
    let activatable = dbus.list_activatable_names().await.unwrap_or_default();
    if activatable.iter().any(|n| n.as_str() == BUS_NAME) {
        return Ok(conn);
    }
    Err(format!("no {BUS_NAME} on it"))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::read_record;

    #[test]
    fn a_record_others_can_write_is_not_believed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bus.0");
        std::fs::write(&path, "unix:path=/tmp/elsewhere\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert_eq!(read_record(&path).as_deref(), Ok("unix:path=/tmp/elsewhere"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        let refused = read_record(&path).expect_err("a writable record");
        assert!(refused.contains("writable by others"), "{refused}");
        std::fs::write(&path, "  \n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert!(read_record(&path).is_err_and(|why| why.contains("empty")));
    }
}
