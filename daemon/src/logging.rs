//! The daemon's logs: standard error, which systemd connects to the journal,
//! or a file in the state directory when nobody would read standard error.
//!
//! When standard error *is* the journal (systemd says so in `JOURNAL_STREAM`)
//! every line starts with its syslog priority (`<3>` error … `<7>` debug, see
//! sd-daemon(3)) so that `journalctl -p warning` works, and carries no
//! timestamp or colour, which the journal adds or does not want. This was
//! chosen over tracing-journald: no extra dependency or socket, the same code
//! path whether systemd or a bare `dbus-daemon` started the daemon, and
//! nothing is lost when the journal socket is not reachable from the sandbox.
//!
//! A `dbus-daemon` without systemd (a `dbus-launch` session) starts the
//! services it activates with standard error on `/dev/null`: then the logs go
//! to [`file::RotatingFile`] in the state directory, where `elicit status`
//! points. A pipe or a file on standard error is someone's choice (a
//! supervisor, `2>log`, the tests) and is kept.

mod escape;
mod file;

use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use tracing::{Level, Metadata};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// Where the logs go, decided once at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// The journal, through standard error.
    Journal,
    /// Standard error: a terminal, a pipe or a file someone chose.
    Stderr,
    /// The rotated file in the state directory.
    File(PathBuf),
    /// Standard error although it is discarded: the file could not be
    /// opened (why).
    Discarded(String),
}

/// Installs the global subscriber; `ELICITD_LOG` filters (default `info`).
/// Every field is escaped and bounded ([`escape`]) at every level.
/// `log_file` is where the logs go when standard error leads nowhere; the
/// caller logs the returned [`Destination`] so that a reader of any of
/// them knows where the others went.
pub fn init(log_file: Option<&Path>) -> Destination {
    let filter = filter(std::env::var("ELICITD_LOG").ok().as_deref());
    if stderr_is_journal() {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .fmt_fields(escape::fields())
            .with_writer(JournalStderr)
            .with_ansi(false)
            .without_time()
            .init();
        return Destination::Journal;
    }
    if let (true, Some(path)) = (stderr_is_discarded(), log_file) {
        match file::RotatingFile::open(path) {
            Ok(writer) => {
                tracing_subscriber::fmt()
                    .with_env_filter(filter)
                    .fmt_fields(escape::fields())
                    .with_writer(writer)
                    .with_ansi(false)
                    .init();
                return Destination::File(path.to_owned());
            }
            Err(error) => {
                init_stderr(filter);
                return Destination::Discarded(format!("{}: {error}", path.display()));
            }
        }
    }
    init_stderr(filter);
    Destination::Stderr
}

/// Crates held quieter than `ELICITD_LOG` unless it names them, each with
/// its reason.
///
/// - zbus opens an `info` span around every method call it dispatches,
///   with the whole message (header and body) as its fields: at `info`,
///   each call was formatted in full, which cost the daemon a tenth of its
///   time under load, and put a call's arguments beside every line logged
///   while it ran.
/// - notify traces every inotify event of the rules directories' watch,
///   which is the nearest existing folder (often `$HOME`, where a log file
///   may be): at `trace`, each line written raised an event whose line
///   raised another, and the log grew without end.
const QUIET_DEFAULTS: [(&str, &str); 2] = [("zbus", "zbus=warn"), ("notify", "notify=debug")];

/// The filter of `ELICITD_LOG`'s value `spec` (`info` when unset or
/// unreadable).
fn filter(spec: Option<&str>) -> EnvFilter {
    let spec = spec.unwrap_or("info");
    let mut filter = EnvFilter::try_new(spec).unwrap_or_else(|_| EnvFilter::new("info"));
    for (target, directive) in QUIET_DEFAULTS {
        if spec.contains(target) {
            continue;
        }
        if let Ok(directive) = directive.parse() {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

fn init_stderr(filter: EnvFilter) {
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .fmt_fields(escape::fields())
        .with_writer(io::stderr)
        .with_ansi(io::IsTerminal::is_terminal(&io::stderr()))
        .init();
}

/// True when standard error is `/dev/null` or not open at all: what a
/// `dbus-daemon` started by `dbus-launch` gives the services it starts.
fn stderr_is_discarded() -> bool {
    let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() else {
        return true;
    };
    let Ok(meta) = std::fs::File::from(fd).metadata() else {
        return true;
    };
    let Ok(null) = std::fs::metadata("/dev/null") else {
        return false;
    };
    meta.file_type().is_char_device() && meta.rdev() == null.rdev()
}

/// True when `JOURNAL_STREAM` (`DEVICE:INODE`) names our standard error; a
/// child of a journal-connected process inherits the variable but may have
/// another standard error, hence the comparison.
fn stderr_is_journal() -> bool {
    let Some(stream) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    let Some((dev, ino)) = stream.to_str().and_then(|s| s.split_once(':')) else {
        return false;
    };
    let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() else {
        return false;
    };
    let Ok(meta) = std::fs::File::from(fd).metadata() else {
        return false;
    };
    dev.parse() == Ok(meta.dev()) && ino.parse() == Ok(meta.ino())
}

/// The syslog priority of a tracing level.
fn priority(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        Level::DEBUG | Level::TRACE => 7,
    }
}

/// `text` with `<priority>` before each line: the journal reads the prefix
/// per line, so a multi-line message keeps its priority throughout.
fn prefixed(priority: u8, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 4);
    for line in text.split_inclusive(|b| *b == b'\n') {
        out.extend_from_slice(format!("<{priority}>").as_bytes());
        out.extend_from_slice(line);
    }
    out
}

/// Makes a [`Prefixed`] writer for each event, knowing its level.
struct JournalStderr;

impl<'a> MakeWriter<'a> for JournalStderr {
    type Writer = Prefixed;

    fn make_writer(&'a self) -> Prefixed {
        Prefixed(6)
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Prefixed {
        Prefixed(priority(meta.level()))
    }
}

/// Writes to standard error with a priority prefix. The fmt layer formats a
/// whole event first and writes it in one call, so a prefix never lands
/// inside a line.
struct Prefixed(u8);

impl Write for Prefixed {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stderr().write_all(&prefixed(self.0, buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_carries_its_priority() {
        assert_eq!(prefixed(3, b"broken\n  because\n"), b"<3>broken\n<3>  because\n");
        assert_eq!(prefixed(6, b"ready"), b"<6>ready");
        assert_eq!(priority(&Level::WARN), 4);
        assert_eq!(priority(&Level::TRACE), 7);
    }

    /// Whether `filter` lets an `info` span of `target` through.
    fn span_enabled(filter: EnvFilter, target_is_zbus: bool) -> bool {
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry().with(filter);
        tracing::subscriber::with_default(subscriber, || {
            let span = if target_is_zbus {
                tracing::info_span!(target: "zbus::object_server", "dispatch_call")
            } else {
                tracing::info_span!(target: "elicitd::driver", "ours")
            };
            !span.is_disabled()
        })
    }

    #[test]
    fn zbus_spans_stay_off_at_info_unless_named() {
        assert!(
            !span_enabled(filter(None), true),
            "zbus's per-call span at the default level"
        );
        assert!(
            !span_enabled(filter(Some("info")), true),
            "zbus's per-call span at ELICITD_LOG=info"
        );
        assert!(span_enabled(filter(Some("info")), false), "our own spans at info");
        assert!(span_enabled(filter(Some("info,zbus=info")), true), "zbus named");
        assert!(
            !span_enabled(filter(Some("not a [filter")), true),
            "a bad value is info"
        );
    }

    #[test]
    fn the_rules_watchs_inotify_traces_stay_off_at_trace_unless_named() {
        use tracing_subscriber::layer::SubscriberExt;
        let traced = |spec: &str| {
            let subscriber = tracing_subscriber::registry().with(filter(Some(spec)));
            tracing::subscriber::with_default(
                subscriber,
                || tracing::event_enabled!(target: "notify::inotify", tracing::Level::TRACE),
            )
        };
        assert!(!traced("trace"), "a log in a watched folder would feed itself");
        assert!(traced("trace,notify=trace"), "notify named");
    }

    #[test]
    fn a_terminal_or_pipe_is_not_the_journal_without_the_variable() {
        // The test runner never sets JOURNAL_STREAM to its own stderr.
        if std::env::var_os("JOURNAL_STREAM").is_none() {
            assert!(!stderr_is_journal());
        }
    }
}
