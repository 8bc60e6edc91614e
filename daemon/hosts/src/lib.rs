//! The MCP hosts' own configuration files, and `elicit wrap`'s edit of
//! them: `elicit proxy --` put in front of each stdio server's command,
//! and taken away again by `elicit unwrap`.
//!
//! A user's files are edited as a careful person would: only the
//! changed values are written; everything else (comments, key order,
//! indentation, trailing commas, keys elicit does not know) stays byte
//! for byte. Each file is replaced atomically, with its mode and owner,
//! and only if it still holds what the edit was made from; a backup
//! under elicitd's state directory lets `unwrap` give back the file as
//! it was, or, where the host changed it meanwhile, the entries.
//!
//! # The crates under the edits, and why
//!
//! - JSON and JSONC (Claude Code, Gemini CLI, VS Code, Zed, opencode, …):
//!   [`jsonc_parser`] (dprint's, used by Deno) parses comments and trailing
//!   commas and gives every node's byte range; the edit is a splice at
//!   those ranges, so nothing outside them is ever re-serialised. Its
//!   `cst` feature edits in place too, but chooses the layout of what it
//!   inserts; the splice lays new items out as their neighbours are.
//! - TOML (Codex): [`toml_edit`], the format-preserving editor Cargo
//!   itself uses. A file it would not write back unchanged is refused.
//! - YAML (Goose, Continue): no YAML crate both keeps comments and edits
//!   reliably: `serde_yaml` is unmaintained and drops comments;
//!   [`yaml_edit`] is lossless (on `rowan`) but young. It is used to parse
//!   (a file it reports errors in is left alone) and to say where each
//!   node is; the edit is a small, tested text change at those places
//!   (a value replaced, list lines added or taken away).

mod backup;
mod entry;
mod error;
mod format;
mod host;
mod host_lock;
mod run;
mod write;

#[cfg(test)]
mod tests;

pub use backup::{Backup, Lock, Saved, Store};
pub use entry::{Entry, Verdict, is_elicit, judge};
pub use error::Error;
pub use host::{ALL, Format, Host, HostFile, Places, Scope, Section};
pub use run::{Action, FileReport, Options, ServerReport, survey, unwrap, wrap};

/// The host files of `hosts` that exist, user files first.
pub fn discover(places: &Places, hosts: &[Host]) -> Vec<HostFile> {
    hosts
        .iter()
        .flat_map(|host| places.files(*host))
        .filter(|file| file.path.is_file())
        .collect()
}
