//! The window's size, remembered between runs: a GLib key file,
//! `$XDG_STATE_HOME/elicitd/elicit-gtk.ini` (`[window] width=… height=…`),
//! as GNOME applications keep theirs. State, not configuration: losing it
//! costs only the size, so every failure to read or write it is ignored.

use std::path::PathBuf;

use gtk::glib;

const GROUP: &str = "window";

/// Sizes outside this range are not a window anyone chose.
const SANE: std::ops::RangeInclusive<i32> = 200..=10_000;

fn path() -> Option<PathBuf> {
    let base = directories::BaseDirs::new()?;
    Some(base.state_dir()?.join("elicitd").join("elicit-gtk.ini"))
}

/// The size the user last left the window at, if any.
pub(crate) fn load() -> Option<(i32, i32)> {
    let file = glib::KeyFile::new();
    file.load_from_file(path()?, glib::KeyFileFlags::NONE).ok()?;
    let width = file.integer(GROUP, "width").ok()?;
    let height = file.integer(GROUP, "height").ok()?;
    (SANE.contains(&width) && SANE.contains(&height)).then_some((width, height))
}

/// Remembers `(width, height)` for the next run.
pub(crate) fn save((width, height): (i32, i32)) {
    if !SANE.contains(&width) || !SANE.contains(&height) || load() == Some((width, height)) {
        return;
    }
    let Some(path) = path() else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let file = glib::KeyFile::new();
    file.set_integer(GROUP, "width", width);
    file.set_integer(GROUP, "height", height);
    let _ = file.save_to_file(path);
}
