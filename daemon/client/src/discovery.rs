//! Finding the user's broker when the environment does not say.
//!
//! MCP hosts start servers with a filtered environment (the Python SDK,
//! fastmcp, fast-agent and the Inspector pass little more than `HOME`,
//! `PATH` and `USER`), so a proxy often runs without
//! `DBUS_SESSION_BUS_ADDRESS`. It then tries, in order:
//!
//! 1. `$XDG_RUNTIME_DIR/bus`, when the variable is set;
//! 2. `/run/user/UID/bus`, the systemd session bus;
//! 3. the addresses in the daemons' records,
//!    [`elicit_proto::paths::bus_record`]:
//!    `$HOME/.local/state/elicitd/bus.UID.BUS_ID`, one per bus, in a folder
//!    derived from `$HOME` alone, since hosts pass at least that; newest
//!    first, at most [`MAX_RECORDS`];
//! 4. the single record of earlier versions, `bus.UID`.
//!
//! The first bus on which elicitd runs (or can be activated) wins, each
//! tried for at most [`CONNECT_TIMEOUT`]. A daemon writes its bus's record
//! (mode 0600) once it owns its name and removes it when it stops; two
//! daemons of one user on two buses each keep their own. A record left by
//! a crash names a bus that is gone or has no broker, and is passed over. A record not owned by the user, or
//! writable by others, is never believed: it could send forms elsewhere.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use elicit_proto::Error;
use elicit_proto::dbus::BUS_NAME;
use zbus::Connection;

/// The most records tried: a folder of records left by crashes must not
/// make finding the broker slow.
pub const MAX_RECORDS: usize = 16;

/// How long one candidate bus may take to connect and answer.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

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
    let Some(dir) = elicit_proto::paths::bus_records_dir() else {
        out.push(("the records".to_owned(), Err("no home directory".to_owned())));
        return out;
    };
    for path in records(&dir) {
        out.push((format!("the record {}", path.display()), read_record(&path)));
    }
    if let Some(path) = elicit_proto::paths::legacy_bus_record().filter(|p| p.exists()) {
        out.push((format!("the record {}", path.display()), read_record(&path)));
    }
    out
}

/// The per-bus records in `dir`, newest first, at most [`MAX_RECORDS`].
fn records(dir: &Path) -> Vec<PathBuf> {
    let prefix = elicit_proto::paths::bus_record_prefix();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(&prefix) && !name.ends_with(".partial"))
        })
        .take(MAX_RECORDS * 8)
        .map(|entry| {
            let modified = entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (modified, entry.path())
        })
        .collect();
    found.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    found
        .into_iter()
        .take(MAX_RECORDS)
        .map(|(_, path)| path)
        .collect()
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
        let reached = tokio::time::timeout(CONNECT_TIMEOUT, connect_if_broker(&address))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {CONNECT_TIMEOUT:?}")));
        match reached {
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
