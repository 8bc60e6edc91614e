//! The three formats host files are written in, each read and edited by
//! its own module with the same two calls: [`scan`] finds the servers,
//! [`edit`] changes the chosen ones and nothing else.

mod json;
mod splice;
mod toml;
mod yaml;

use std::ops::Range;

use crate::entry::Entry;
use crate::host::{Format, HostFile, Section};

/// A server entry found in a file's text.
#[derive(Debug, Clone)]
pub struct Found {
    /// Where it is, and whose.
    pub section: Section,
    /// Its name: the key (or, in Continue's list, its `name`).
    pub name: String,
    /// What it says.
    pub entry: Entry,
    /// Its text in the file, where the format has one place for it
    /// (JSON, YAML; not TOML, whose tables may be split).
    pub span: Option<Range<usize>>,
    /// Whether it has an `args` key (so that unwrapping by hand drops the
    /// one `wrap` added).
    pub has_args: bool,
}

/// What to do to one entry.
#[derive(Debug, Clone)]
pub enum Change {
    /// Put `elicit` (as `program`) with `argv` in place of its command.
    Wrap {
        /// What to start: `elicit`, or its absolute path.
        program: String,
        /// Everything after it.
        argv: Vec<String>,
        /// A remote entry becomes a stdio one.
        remote: bool,
    },
    /// Give it back what it had before `wrap`.
    Unwrap {
        /// The entry's text before `wrap`, where the format keeps one.
        original: Option<String>,
        /// The entry's text right after `wrap`: if it is still that, the
        /// original comes back as it was.
        wrapped: Option<String>,
        /// Whether it had an `args` key before.
        had_args: bool,
    },
}

/// The first three of a stdio wrap's `argv`: `proxy`, `--`, the program,
/// which go before the entry's own arguments.
pub fn stdio_head(argv: &[String]) -> Result<&[String], String> {
    match argv.get(..3) {
        Some(head) if head[1] == "--" => Ok(head),
        _ => Err("not a stdio wrap".to_owned()),
    }
}

/// Every server in `text`, a file of `file.host`.
pub fn scan(file: &HostFile, text: &str) -> Result<Vec<Found>, String> {
    match file.host.format() {
        Format::Json => json::scan(file, text),
        Format::Toml => toml::scan(file, text),
        Format::Yaml => yaml::scan(file, text),
    }
}

/// `text` with `changes` made to the entries `scan` found in it.
pub fn edit(file: &HostFile, text: &str, changes: &[(Found, Change)]) -> Result<String, String> {
    if changes.is_empty() {
        return Ok(text.to_owned());
    }
    match file.host.format() {
        Format::Json => json::edit(file, text, changes),
        Format::Toml => toml::edit(text, changes),
        Format::Yaml => yaml::edit(file.host, text, changes),
    }
}
