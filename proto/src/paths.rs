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

/// Where the daemon records its bus: `$HOME/.local/state/elicitd/bus.UID`.
/// Not `$XDG_STATE_HOME`: hosts that filter the environment drop it, and
/// keep at least `HOME`.
pub fn bus_record() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_owned()))?;
    let uid = rustix::process::getuid().as_raw();
    Some(home.join(".local/state/elicitd").join(format!("bus.{uid}")))
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
