//! `wrap`, `unwrap` and the survey behind `hosts`, one host file at a
//! time: read, decide, edit, check the edit, back up, write; and start
//! over from the read when the file changed under us.

use std::time::Duration;

use serde::Serialize;

use crate::backup::{Backup, Saved, Store};
use crate::entry::{Entry, Verdict, inner_command, judge};
use crate::error::Error;
use crate::format::{self, Change, Found};
use crate::host::{HostFile, Section};
use crate::host_lock::{self, HostLock};
use crate::write::{self, Written};

/// How many times a file that keeps changing under us is read again.
const ATTEMPTS: usize = 50;

/// What to do, besides which files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What wrapped entries start: `elicit`, or its absolute path.
    pub program: String,
    /// Only these servers (all when empty).
    pub servers: Vec<String>,
    /// Show what would change; write nothing.
    pub dry_run: bool,
    /// How long to wait for a host's own lock on its file (Claude Code's
    /// `~/.claude.json.lock`).
    pub lock_wait: Duration,
}

/// One server, and what was (or would be) done with it.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// Where in the file, and whose.
    pub section: Section,
    /// Its name.
    pub name: String,
    /// The command line it has now, for people: program and arguments,
    /// or the URL.
    pub command: Vec<String>,
    /// What `wrap` makes of it.
    pub verdict: Verdict,
    /// What this command did to it.
    pub action: Action,
}

/// What a command did to one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Nothing: only looked at, or not asked for (`--server`).
    None,
    /// Wrapped now (or would be, with `--dry-run`).
    Wrapped,
    /// Given back what it had (or would be).
    Unwrapped,
}

/// One host file, and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file.
    #[serde(flatten)]
    pub file: HostFile,
    /// Its servers.
    pub servers: Vec<ServerReport>,
    /// Why the file was left as it was, if it failed.
    pub error: Option<String>,
    /// Whether the file was (or, with `--dry-run`, would be) written.
    pub changed: bool,
    /// With `--dry-run`: the text before and after.
    #[serde(skip)]
    pub preview: Option<(String, String)>,
}

impl FileReport {
    fn failed(file: &HostFile, error: impl ToString) -> FileReport {
        FileReport {
            file: file.clone(),
            servers: Vec::new(),
            error: Some(error.to_string()),
            changed: false,
            preview: None,
        }
    }
}

fn command_of(entry: &Entry) -> Vec<String> {
    match (&entry.program, &entry.url) {
        (Some(program), _) => std::iter::once(program.clone())
            .chain(entry.args.iter().cloned())
            .collect(),
        (None, Some((_, url))) => vec![url.clone()],
        (None, None) => Vec::new(),
    }
}

fn report(file: &HostFile, found: &[Found], done: &[(Found, Change)]) -> Vec<ServerReport> {
    found
        .iter()
        .map(|f| {
            let change = done
                .iter()
                .find(|(d, _)| d.section == f.section && d.name == f.name)
                .map(|(_, c)| c);
            ServerReport {
                section: f.section.clone(),
                name: f.name.clone(),
                command: command_of(&f.entry),
                verdict: judge(file.host, &f.entry),
                action: match change {
                    None => Action::None,
                    Some(Change::Wrap { .. }) => Action::Wrapped,
                    Some(Change::Unwrap { .. }) => Action::Unwrapped,
                },
            }
        })
        .collect()
}

/// Every server of `file`, judged: what `elicit hosts` shows.
pub fn survey(file: &HostFile) -> FileReport {
    let text = match write::read(&file.path) {
        Ok(text) => text,
        Err(e) => return FileReport::failed(file, e),
    };
    match format::scan(file, &text) {
        Ok(found) => FileReport {
            file: file.clone(),
            servers: report(file, &found, &[]),
            error: None,
            changed: false,
            preview: None,
        },
        Err(reason) => FileReport::failed(file, format!("cannot be read: {reason}")),
    }
}

/// The host's own lock on `file`, where it takes one; none for a dry
/// run, which writes nothing.
fn host_lock(file: &HostFile, options: &Options) -> Result<Option<HostLock>, Error> {
    if options.dry_run || !host_lock::host_locks(file) {
        return Ok(None);
    }
    host_lock::acquire(&file.path, options.lock_wait).map(Some)
}

/// One attempt's reading of `file`, under the host's own lock where it has
/// one (held until the returned guard drops): its text and its servers, or
/// the report of why it cannot be edited.
fn read_locked(
    file: &HostFile,
    options: &Options,
) -> Result<(Option<HostLock>, String, Vec<Found>), Box<FileReport>> {
    let failed = |error: String| Box::new(FileReport::failed(file, error));
    let held = host_lock(file, options).map_err(|e| failed(e.to_string()))?;
    let text = write::read(&file.path).map_err(|e| failed(e.to_string()))?;
    let found = format::scan(file, &text)
        .map_err(|reason| failed(format!("cannot be read, left as it is: {reason}")))?;
    Ok((held, text, found))
}

fn wanted(options: &Options, found: &Found) -> bool {
    options.servers.is_empty() || options.servers.contains(&found.name)
}

fn same_place(found: &Found, saved: &Saved) -> bool {
    found.section.path == saved.path && found.name == saved.name
}

fn text_of(found: &Found, text: &str) -> Option<String> {
    found
        .span
        .clone()
        .and_then(|span| text.get(span))
        .map(str::to_owned)
}

/// Wraps the servers of `file`.
pub fn wrap(store: &Store, file: &HostFile, options: &Options) -> FileReport {
    let before = match store.load(&file.path) {
        Ok(backup) => backup,
        Err(e) => return FileReport::failed(file, e),
    };
    for _ in 0..ATTEMPTS {
        let (_held, text, found) = match read_locked(file, options) {
            Ok(reading) => reading,
            Err(report) => return *report,
        };
        let changes: Vec<(Found, Change)> = found
            .iter()
            .filter(|f| wanted(options, f))
            .filter_map(|f| match judge(file.host, &f.entry) {
                Verdict::Wrap { argv, remote } => Some((
                    f.clone(),
                    Change::Wrap {
                        program: options.program.clone(),
                        argv,
                        remote,
                    },
                )),
                _ => None,
            })
            .collect();
        let mut outcome = FileReport {
            file: file.clone(),
            servers: report(file, &found, &changes),
            error: None,
            changed: !changes.is_empty(),
            preview: None,
        };
        if changes.is_empty() {
            return outcome;
        }
        let new = match checked_edit(file, &text, &changes, true) {
            Ok(new) => new,
            Err(reason) => return FileReport::failed(file, format!("left as it is: {reason}")),
        };
        if options.dry_run {
            outcome.preview = Some((text, new));
            return outcome;
        }
        let backup = match wrap_backup(file, before.as_ref(), &text, &new, &changes) {
            Ok(backup) => backup,
            Err(reason) => return FileReport::failed(file, reason),
        };
        match save_and_write(store, file, before.as_ref(), &backup, &text, &new) {
            Ok(Written::Done) => return outcome,
            Ok(Written::Changed) => continue,
            Err(e) => return FileReport::failed(file, e),
        }
    }
    FileReport::failed(
        file,
        "it kept changing while elicit edited it; nothing was written",
    )
}

/// The backup after a wrap of `text` into `new`: the first original
/// kept while the file is as we left it.
fn wrap_backup(
    file: &HostFile,
    before: Option<&Backup>,
    text: &str,
    new: &str,
    changes: &[(Found, Change)],
) -> Result<Backup, String> {
    let rescanned = format::scan(file, new)?;
    let mut backup = match before {
        Some(b) => Backup {
            path: file.path.clone(),
            original: b.original.clone().filter(|_| b.written == text),
            written: new.to_owned(),
            entries: b.entries.clone(),
        },
        None => Backup {
            path: file.path.clone(),
            original: Some(text.to_owned()),
            written: new.to_owned(),
            entries: Vec::new(),
        },
    };
    for (found, _) in changes {
        let after = rescanned
            .iter()
            .find(|f| f.section == found.section && f.name == found.name);
        backup.entries.retain(|s| !same_place(found, s));
        backup.entries.push(Saved {
            path: found.section.path.clone(),
            name: found.name.clone(),
            original: text_of(found, text),
            wrapped: after.and_then(|a| text_of(a, new)),
            had_args: found.has_args,
        });
    }
    Ok(backup)
}

/// Saves `backup`, then writes `new` if the file still holds `text`;
/// puts the earlier backup back if the file was not written.
fn save_and_write(
    store: &Store,
    file: &HostFile,
    before: Option<&Backup>,
    backup: &Backup,
    text: &str,
    new: &str,
) -> Result<Written, Error> {
    store.save(backup)?;
    let written = write::replace(&file.path, text, new);
    if !matches!(written, Ok(Written::Done)) {
        match before {
            Some(before) => store.save(before)?,
            None => store.remove(&file.path)?,
        }
    }
    written
}

/// The edit, checked before anything is written: every changed entry
/// is now as asked, every other entry reads as before, and (for a wrap)
/// a second wrap would change nothing.
fn checked_edit(
    file: &HostFile,
    text: &str,
    changes: &[(Found, Change)],
    wrapping: bool,
) -> Result<String, String> {
    let new = format::edit(file, text, changes)?;
    let before = format::scan(file, text)?;
    let after = format::scan(file, &new).map_err(|e| format!("the edit would not read back: {e}"))?;
    if before.len() != after.len() {
        return Err("the edit would change the number of servers".to_owned());
    }
    for (old, now) in before.iter().zip(&after) {
        let changed = changes
            .iter()
            .any(|(c, _)| c.section == old.section && c.name == old.name);
        let verdict = judge(file.host, &now.entry);
        let fine = match (changed, wrapping) {
            (false, _) => old.entry == now.entry && old.name == now.name,
            (true, true) => verdict == Verdict::Wrapped,
            (true, false) => verdict != Verdict::Wrapped,
        };
        if !fine {
            return Err(format!(
                "the edit of server {:?} did not come out as meant",
                now.name
            ));
        }
    }
    Ok(new)
}

/// Gives back the servers of `file` what `wrap` took.
pub fn unwrap(store: &Store, file: &HostFile, options: &Options) -> FileReport {
    let before = match store.load(&file.path) {
        Ok(backup) => backup,
        Err(e) => return FileReport::failed(file, e),
    };
    for _ in 0..ATTEMPTS {
        let (_held, text, found) = match read_locked(file, options) {
            Ok(reading) => reading,
            Err(report) => return *report,
        };
        let saved = |f: &Found| {
            before
                .as_ref()
                .and_then(|b| b.entries.iter().find(|s| same_place(f, s)))
        };
        let changes: Vec<(Found, Change)> = found
            .iter()
            .filter(|f| wanted(options, f) && judge(file.host, &f.entry) == Verdict::Wrapped)
            .filter(|f| saved(f).is_some() || inner_command(&f.entry).is_some())
            .map(|f| {
                let s = saved(f);
                let change = Change::Unwrap {
                    original: s.and_then(|s| s.original.clone()),
                    wrapped: s.and_then(|s| s.wrapped.clone()),
                    had_args: s.is_none_or(|s| s.had_args),
                };
                (f.clone(), change)
            })
            .collect();
        let mut outcome = FileReport {
            file: file.clone(),
            servers: report(file, &found, &changes),
            error: None,
            changed: !changes.is_empty(),
            preview: None,
        };
        if changes.is_empty() {
            if before.is_some() && options.servers.is_empty() && !options.dry_run {
                // Nothing of ours is left in it: the backup has served.
                if let Err(e) = store.remove(&file.path) {
                    return FileReport::failed(file, e);
                }
            }
            return outcome;
        }
        let all = before.as_ref().is_some_and(|b| {
            b.entries
                .iter()
                .all(|s| changes.iter().any(|(f, _)| same_place(f, s)))
        });
        // Nothing else changed: the file comes back byte for byte.
        let whole = before
            .as_ref()
            .filter(|b| all && b.written == text)
            .and_then(|b| b.original.clone());
        let new = match whole {
            Some(original) => original,
            None => match checked_edit(file, &text, &changes, false) {
                Ok(new) => new,
                Err(reason) => return FileReport::failed(file, format!("left as it is: {reason}")),
            },
        };
        if options.dry_run {
            outcome.preview = Some((text, new));
            return outcome;
        }
        // Kept: the entries still wrapped and not given back now; one the
        // user removed or unwrapped by hand has nothing left to give back.
        let after = before.as_ref().map(|b| Backup {
            path: b.path.clone(),
            original: None,
            written: new.clone(),
            entries: b
                .entries
                .iter()
                .filter(|s| !changes.iter().any(|(f, _)| same_place(f, s)))
                .filter(|s| {
                    found
                        .iter()
                        .any(|f| same_place(f, s) && judge(file.host, &f.entry) == Verdict::Wrapped)
                })
                .cloned()
                .collect(),
        });
        let written = match write::replace(&file.path, &text, &new) {
            Ok(written) => written,
            Err(e) => return FileReport::failed(file, e),
        };
        if written == Written::Changed {
            continue;
        }
        let kept = match after {
            Some(after) if !after.entries.is_empty() => store.save(&after),
            _ => store.remove(&file.path),
        };
        if let Err(e) = kept {
            outcome.error = Some(format!("restored, but its backup could not be updated: {e}"));
        }
        return outcome;
    }
    FileReport::failed(
        file,
        "it kept changing while elicit edited it; nothing was written",
    )
}
