//! The daemon's record of its bus, for the commands that cannot see
//! `DBUS_SESSION_BUS_ADDRESS` because their host filtered it out (the
//! reading side is `elicit_client::discovery`). Written 0600 once the
//! daemon owns its name, removed when it stops.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The daemon's record of its bus; removed when dropped.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    address: String,
}

impl Record {
    /// Writes `address` to [`elicit_proto::paths::bus_record`], readable by the user alone.
    pub fn write(address: &str) -> std::io::Result<Record> {
        let path =
            elicit_proto::paths::bus_record().ok_or_else(|| std::io::Error::other("no home directory"))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
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
        // its bus and a new one started elsewhere): only our own goes.
        let ours = std::fs::read_to_string(&self.path).is_ok_and(|text| text.trim() == self.address);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
