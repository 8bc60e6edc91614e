//! Where rules files come from, and which one of a name wins.
//!
//! Files are `*.rhai` in the rules directories. Directories are given from
//! lowest to highest precedence; a file in a later directory replaces the
//! file of the same name in an earlier one, and the compiled-in defaults sit
//! below them all. Hidden files (editors' temporaries) are ignored.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The name of the compiled-in defaults file.
pub(crate) const BUILTIN_NAME: &str = "50-elicitd-defaults.rhai";

/// The compiled-in defaults: the same text that packaging installs into
/// `/usr/share/elicitd/rules.d`, so a build run straight from the tree has them.
pub(crate) const BUILTIN_TEXT: &str = include_str!("../../../packaging/rules.d/50-elicitd-defaults.rhai");

/// Where the compiled-in file claims to live, for messages.
pub(crate) const BUILTIN_PATH: &str = "(built-in)/50-elicitd-defaults.rhai";

/// A file larger than this is refused unread: rules are short, and a huge
/// file would only slow every reload.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// One rules file: its name, where it was found, and its text or why it
/// could not be read.
#[derive(Debug)]
pub(crate) struct RuleFile {
    /// The file name, which orders the files and decides overrides.
    pub name: String,
    /// The full path (or [`BUILTIN_PATH`]).
    pub path: PathBuf,
    /// The text, or a reason it could not be read.
    pub text: Result<String, String>,
}

/// Every rules file found, grouped by name in name order; each group holds
/// its candidates from highest to lowest precedence. Directories that cannot
/// be listed are returned as problems.
pub(crate) fn collect(dirs: &[PathBuf]) -> (Vec<Vec<RuleFile>>, Vec<(PathBuf, String)>) {
    let mut by_name: BTreeMap<String, Vec<RuleFile>> = BTreeMap::new();
    by_name
        .entry(BUILTIN_NAME.to_owned())
        .or_default()
        .push(RuleFile {
            name: BUILTIN_NAME.to_owned(),
            path: PathBuf::from(BUILTIN_PATH),
            text: Ok(BUILTIN_TEXT.to_owned()),
        });
    let mut problems = Vec::new();
    for dir in dirs {
        match list_dir(dir) {
            Ok(files) => {
                for file in files {
                    by_name.entry(file.name.clone()).or_default().push(file);
                }
            }
            Err(problem) => problems.push((dir.clone(), problem)),
        }
    }
    let groups = by_name
        .into_values()
        .map(|mut group| {
            // Pushed lowest precedence first; callers want the winner first.
            group.reverse();
            group
        })
        .collect();
    (groups, problems)
}

/// The rules files of one directory, in name order; a missing directory has
/// none.
fn list_dir(dir: &Path) -> Result<Vec<RuleFile>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(format!("cannot list the directory: {error}")),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| format!("cannot list the directory: {error}"))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') || !name.ends_with(".rhai") {
            continue;
        }
        let path = entry.path();
        // Follows symlinks, as an administrator's `ln -s` expects.
        if !path.is_file() {
            continue;
        }
        let text = read(&path);
        files.push(RuleFile { name, path, text });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

fn read(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "is {size} bytes, more than the limit of {MAX_FILE_BYTES}"
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))
}

/// The system and user rules directories, lowest precedence first:
/// `/usr/share/elicitd/rules.d` (the package's), `/etc/elicitd/rules.d`
/// (the administrator's), `$XDG_CONFIG_HOME/elicitd/rules.d` (the user's).
pub fn standard_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![
        PathBuf::from("/usr/share/elicitd/rules.d"),
        PathBuf::from("/etc/elicitd/rules.d"),
    ];
    if let Some(base) = directories::BaseDirs::new() {
        dirs.push(base.config_dir().join("elicitd").join("rules.d"));
    }
    dirs
}
