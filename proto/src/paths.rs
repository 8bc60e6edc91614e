//! Where the daemon keeps its files, known to the daemon and to the
//! commands that find it (XDG, plus one record hosts cannot hide).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file in the state directory that holds the running daemon's PID,
/// locked for as long as that daemon runs.
pub const PID_FILE: &str = "elicitd.pid";

/// The log file in the state directory, used when nobody reads the
/// daemon's standard error; older ones are `elicitd.log.1`, `.2`, ….
pub const LOG_FILE: &str = "elicitd.log";

/// `$XDG_STATE_HOME/elicitd` (default `~/.local/state/elicitd`).
pub fn state_dir() -> Option<PathBuf> {
    let dirs = directories::BaseDirs::new()?;
    Some(dirs.state_dir().unwrap_or(dirs.data_local_dir()).join("elicitd"))
}

/// `$XDG_CONFIG_HOME/elicitd/config.toml` (default
/// `~/.config/elicitd/config.toml`).
pub fn config_file() -> Option<PathBuf> {
    Some(
        directories::BaseDirs::new()?
            .config_dir()
            .join("elicitd")
            .join("config.toml"),
    )
}

/// The folder of the daemon's bus records: `$HOME/.local/state/elicitd`.
/// Not `$XDG_STATE_HOME`: hosts that filter the environment drop it, and
/// keep at least `HOME`.
pub fn bus_records_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_owned()))?;
    Some(home.join(".local/state/elicitd"))
}

/// How every record of this uid's buses is named: `bus.UID.` and the bus.
pub fn bus_record_prefix() -> String {
    format!("bus.{}.", rustix::process::getuid().as_raw())
}

/// Where the daemon on the bus whose ID (`org.freedesktop.DBus.GetId`) is
/// `bus_id` records it: `$HOME/.local/state/elicitd/bus.UID.BUS_ID`. One
/// record per bus, so that two daemons of one user on two buses never
/// overwrite or remove each other's.
pub fn bus_record(bus_id: &str) -> Option<PathBuf> {
    Some(bus_records_dir()?.join(format!("{}{bus_id}", bus_record_prefix())))
}

/// The single record of earlier versions, `bus.UID`, which the last daemon
/// to start overwrote: still read, never written.
pub fn legacy_bus_record() -> Option<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    Some(bus_records_dir()?.join(format!("bus.{uid}")))
}

/// The log file of the daemon whose state directory is `dir`.
pub fn log_file(dir: &Path) -> PathBuf {
    dir.join(LOG_FILE)
}

/// The PID written by the daemon that holds `dir`, if one holds it now.
pub fn running_pid(dir: &Path) -> Option<u32> {
    let mut file = File::open(dir.join(PID_FILE)).ok()?;
    // A lock we can take means nobody holds the directory: the PID in the
    // file is a stopped daemon's.
    if file.try_lock_shared().is_ok() {
        return None;
    }
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
