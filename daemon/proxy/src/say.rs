//! The proxy's own lines on standard error.
//!
//! A host that pipes the server's standard error may be gone when the
//! proxy has something to say (Claude Code is); `eprintln!` panics on
//! `EPIPE`, and a panicking proxy leaves its server behind. So every line
//! is written fallibly, and a standard error nobody reads is ignored.

use std::io::Write;

/// Writes `line` and a newline to standard error, ignoring any failure.
pub fn line(line: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}").and_then(|()| stderr.flush());
}

/// `say!("…", args)`: [`line`] with `format!` arguments.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::say::line(format_args!($($arg)*))
    };
}
