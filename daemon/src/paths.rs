//! Where the daemon keeps its state and finds its config (XDG).

use std::path::PathBuf;

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
