//! The daemon's record of its bus, for the commands that cannot see
//! `DBUS_SESSION_BUS_ADDRESS` because their host filtered it out (the
//! reading side is `elicit_client::discovery`). Written 0600 once the
//! daemon owns its name, removed when it stops.
//!
//! One record per bus, named by the bus's ID
//! ([`elicit_proto::paths::bus_record`]): a second daemon of the same user
//! on another bus writes a record of its own, and neither overwrites or
//! removes the other's. Only the daemon owning the name on a bus writes
//! that bus's record, so a record it replaces was a stopped daemon's.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How many other records one start looks at to clear those whose bus is
/// gone (bounded: the folder is the user's, but need not stay small).
const PRUNE_AT_MOST: usize = 64;

/// The daemon's record of its bus; removed when dropped.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    address: String,
}

/// Why no record was written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// `HOME` is unset and no home directory is known.
    #[error("no home directory")]
    NoHome,
    /// The bus answered `GetId` with something that is no bus ID.
    #[error("the bus ID {0:?} is not a hex string")]
    BadBusId(String),
    /// Writing the record failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Record {
    /// Writes `address` to the record of the bus `bus_id`, readable by the
    /// user alone, and clears records whose bus socket no longer exists.
    pub fn write(address: &str, bus_id: &str) -> Result<Record, RecordError> {
        let hex = !bus_id.is_empty() && bus_id.len() <= 64 && bus_id.chars().all(|c| c.is_ascii_hexdigit());
        if !hex {
            return Err(RecordError::BadBusId(bus_id.to_owned()));
        }
        let path = elicit_proto::paths::bus_record(bus_id).ok_or(RecordError::NoHome)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
            prune_dead(dir, &path);
        }
        // Written beside and renamed, so that a reader never sees half an
        // address; created 0600 so that it never is readable by others.
        let partial = path.with_extension("partial");
        let _ = std::fs::remove_file(&partial);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(address.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&partial, &path)?;
        Ok(Record {
            path,
            address: address.to_owned(),
        })
    }

    /// Leaves the record in place: the bus lives on, and activation
    /// starts elicitd on it again (the daemon is exiting idle).
    pub fn keep(self) {
        std::mem::forget(self);
    }

    /// Where the record is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        // Another daemon may have replaced it meanwhile (this one lost
        // its bus and a new one started on it): only our own goes.
        let ours = std::fs::read_to_string(&self.path).is_ok_and(|text| text.trim() == self.address);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Removes the records in `dir` (other than `own`) whose bus is a socket
/// path that no longer exists: left by a crash, they name no bus at all.
/// A record whose bus may live is never touched.
fn prune_dead(dir: &Path, own: &Path) {
    let prefix = elicit_proto::paths::bus_record_prefix();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten().take(PRUNE_AT_MOST) {
        let path = entry.path();
        let name = entry.file_name();
        let ours = name.to_str().is_some_and(|n| n.starts_with(&prefix));
        if !ours || path == own {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if socket_gone(text.trim()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Whether `address` is one `unix:path=` socket that does not exist.
fn socket_gone(address: &str) -> bool {
    if address.contains(';') {
        return false;
    }
    let Some(rest) = address.strip_prefix("unix:") else {
        return false;
    };
    rest.split(',')
        .find_map(|kv| kv.strip_prefix("path="))
        // An escaped path (`%20`) is not read here: left alone.
        .is_some_and(|path| !path.contains('%') && !Path::new(path).exists())
}

#[cfg(test)]
mod tests {
    use super::socket_gone;

    #[test]
    fn only_a_missing_socket_path_is_gone() {
        assert!(socket_gone("unix:path=/nonexistent/bus"));
        assert!(socket_gone("unix:path=/nonexistent/bus,guid=ab"));
        assert!(!socket_gone("unix:path=/"));
        assert!(!socket_gone("unix:abstract=/tmp/dbus-x"));
        assert!(!socket_gone("tcp:host=127.0.0.1,port=1"));
    }
}
