//! Everything `elicit` prints: text lines for people with their control
//! characters escaped, JSON for scripts with its strings made terminal-safe,
//! and a reader that went away (`elicit list | head`) ending the command
//! quietly instead of with a panic.
//!
//! Text lines are escaped whole, so that no field taken from a server, a
//! client or a rules file can be printed raw by forgetting it.

use std::fmt;
use std::io::{self, ErrorKind, Write};

use elicit_proto::text::{escape_controls, json_safe};

/// Prints one line of text for a person, escaped; see [`say!`].
pub fn text(line: fmt::Arguments<'_>) {
    write_line(&escape_controls(&line.to_string()));
}

/// Prints one JSON document on its own line, its strings made safe.
pub fn json(document: &str) {
    write_line(&json_safe(document));
}

/// As [`json`], but a reader that went away is only ignored, for a command
/// whose exit status says more than its output (`elicit ask`).
pub fn json_final(document: &str) {
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{}", json_safe(document)).and_then(|()| stdout.flush());
}

/// Prints one line of text for people, escaped, ignoring a reader that
/// went away: for a command that must go on to stop what it started
/// (`elicit demo`), which exiting here would leave running.
pub fn note(line: fmt::Arguments<'_>) {
    let line = escape_controls(&line.to_string()).into_owned();
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
}

/// Prints one line of text to standard error, escaped; a closed standard
/// error is not worth a panic.
pub fn error(line: fmt::Arguments<'_>) {
    let line = escape_controls(&line.to_string()).into_owned();
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// Writes `line` and a newline, and flushes, so that a `watch` reader sees
/// each event at once. A reader that closed the pipe ends the command with
/// status 0: whoever read what they wanted (`head`) is done, and nobody is
/// left to tell. Any other failure (a full disk) is reported, status 1.
fn write_line(line: &str) {
    write_text(line, "\n");
}

/// Prints part of one JSON document, its strings made safe as by
/// [`json`], and `end` after it (`"\n"` to end the line): a list printed
/// page by page is still one document on one line.
pub fn json_part(part: &str, end: &str) {
    write_text(&json_safe(part), end);
}

fn write_text(text: &str, end: &str) {
    let mut stdout = io::stdout().lock();
    let written = write!(stdout, "{text}{end}").and_then(|()| stdout.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            error(format_args!("elicit: cannot write to standard output: {e}"));
            std::process::exit(1);
        }
    }
}

/// `println!` for people: the whole line goes through [`escape_controls`].
macro_rules! say {
    ($($arg:tt)*) => { $crate::out::text(format_args!($($arg)*)) };
}

/// `eprintln!` for people: escaped, and never a panic.
macro_rules! esay {
    ($($arg:tt)*) => { $crate::out::error(format_args!($($arg)*)) };
}

pub(crate) use {esay, say};
