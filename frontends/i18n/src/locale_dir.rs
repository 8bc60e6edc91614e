//! Where the compiled catalogues are found.

use std::path::{Path, PathBuf};

/// The environment variable that names the catalogues' directory (the one
/// holding `de/LC_MESSAGES/elicitd.mo`), for tests and development.
pub const LOCALEDIR_ENV: &str = "ELICITD_LOCALEDIR";

/// The catalogues this build compiled from `po/` (build.rs): found by a
/// program run from the build tree, which has no `share/locale` of its own.
const BUILT: &str = concat!(env!("OUT_DIR"), "/locale");

/// The catalogues' directory: [`LOCALEDIR_ENV`] when set; else
/// `share/locale` beside the program's `bin/` (`/usr/share/locale` for
/// `/usr/bin`, `PREFIX/share/locale` for `packaging/install.sh`'s prefix,
/// `target/share/locale` where `po/build.sh` puts them) when that exists;
/// else the catalogues compiled with this build, while they exist (a
/// program run where cargo built it); else `/usr/share/locale`.
pub fn locale_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(LOCALEDIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(|prefix| prefix.join("share/locale"))
        .filter(|dir| dir.is_dir())
        .or_else(|| Some(PathBuf::from(BUILT)).filter(|dir| dir.is_dir()))
        .unwrap_or_else(|| PathBuf::from("/usr/share/locale"))
}
