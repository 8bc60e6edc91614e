//! The log file in the state directory, for a daemon whose standard error
//! nobody reads: `elicitd.log`, 0600, moved to `elicitd.log.1` (and the
//! older ones one number up, at most [`KEEP`]) once it passes [`LIMIT`].
//!
//! Written here rather than taken from file-rotate 0.8, which asserts and
//! `expect`s inside its writer: a log directory removed while the daemon
//! runs would have panicked the broker from inside a log call.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::fmt::MakeWriter;

/// Size past which the file is rotated.
pub const LIMIT: u64 = 1024 * 1024;
/// Rotated files kept beside the current one.
pub const KEEP: usize = 3;

/// A size-rotated log file; every event is one `write` under the lock, so
/// lines from several threads never interleave.
pub struct RotatingFile {
    inner: Mutex<Inner>,
}

struct Inner {
    path: PathBuf,
    file: Option<File>,
    written: u64,
}

fn open(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let len = file.metadata()?.len();
    Ok((file, len))
}

impl RotatingFile {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: &Path) -> io::Result<RotatingFile> {
        let (file, written) = open(path)?;
        Ok(RotatingFile {
            inner: Mutex::new(Inner {
                path: path.to_owned(),
                file: Some(file),
                written,
            }),
        })
    }
}

impl Inner {
    fn rotate(&mut self) -> io::Result<()> {
        self.file = None;
        let numbered = |n: usize| {
            let mut name = self.path.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        for n in (1..KEEP).rev() {
            let from = numbered(n);
            if from.exists() {
                std::fs::rename(&from, numbered(n + 1))?;
            }
        }
        if self.path.exists() {
            std::fs::rename(&self.path, numbered(1))?;
        }
        let (file, written) = open(&self.path)?;
        self.file = Some(file);
        self.written = written;
        Ok(())
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written >= LIMIT || self.file.is_none() {
            // `rotate` closes the file first: a failed rotation loses this
            // event, and the next one tries again.
            self.rotate()?;
        }
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("no log file open"));
        };
        file.write_all(buf)?;
        self.written += buf.len() as u64;
        Ok(buf.len())
    }
}

/// The writer handed to the fmt layer for one event.
pub struct Handle<'a>(&'a RotatingFile);

impl Write for Handle<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.inner.lock() {
            Ok(mut inner) => inner.write(buf),
            // A thread that panicked mid-write leaves a consistent file
            // behind: the lock's data is only a handle and a counter.
            Err(poisoned) => poisoned.into_inner().write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for RotatingFile {
    type Writer = Handle<'a>;

    fn make_writer(&'a self) -> Handle<'a> {
        Handle(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_file_is_private_and_rotated_past_the_limit() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("elicitd.log");
        let log = RotatingFile::open(&path).expect("open");
        let line = vec![b'x'; 64 * 1024];
        // Enough for every kept file and one more, so the oldest is dropped.
        for _ in 0..(LIMIT as usize / line.len() + 1) * (KEEP + 2) {
            log.make_writer().write_all(&line).expect("write");
        }
        for name in ["elicitd.log", "elicitd.log.1", "elicitd.log.2", "elicitd.log.3"] {
            let meta = std::fs::metadata(dir.path().join(name)).expect(name);
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{name}");
            assert!(
                meta.len() <= LIMIT + line.len() as u64,
                "{name} is {} bytes",
                meta.len()
            );
        }
        assert!(
            !dir.path().join("elicitd.log.4").exists(),
            "at most {KEEP} old files"
        );
    }
}
