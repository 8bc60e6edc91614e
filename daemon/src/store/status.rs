//! What the storage thread is doing, for the error of a write that waited
//! too long: a thread stuck inside sled costs writes only, and each of them
//! is told why.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Shared between the storage thread and the writers waiting for it.
#[derive(Debug, Default)]
pub(super) struct Status {
    /// The step in progress, and since when.
    doing: Mutex<Option<(&'static str, Instant)>>,
    /// The last failure the thread saw.
    last_error: Mutex<Option<String>>,
    /// Flushes done, each a sled flush and a sync: what group commit saves.
    flushes: AtomicU64,
}

/// Below this much free space, a stuck write is put down to a full disk.
const NEARLY_FULL: u64 = 64 * 1024;

impl Status {
    pub(super) fn doing(&self, what: &'static str) {
        let mut doing = self.doing.lock().unwrap_or_else(|p| p.into_inner());
        *doing = Some((what, doing.map_or_else(Instant::now, |(_, since)| since)));
    }

    pub(super) fn done(&self) {
        *self.doing.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    pub(super) fn flushed(&self) {
        self.flushes.fetch_add(1, Ordering::Relaxed);
    }

    /// How many flushes the thread has done.
    #[cfg(test)]
    pub(super) fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    pub(super) fn failed(&self, error: &str) {
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.to_owned());
    }

    /// Why a write to the store in `dir` has not finished within its
    /// bound: what the thread is doing, the last error it saw, and a full
    /// file system when it is one.
    pub(super) fn describe(&self, dir: &Path, bound: std::time::Duration) -> String {
        let mut text = match *self.doing.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((what, since)) => format!(
                "the storage thread has been {what} for {:.1} s",
                since.elapsed().as_secs_f64()
            ),
            None => format!("the write waited {} s in the storage queue", bound.as_secs_f64()),
        };
        if let Ok(stat) = rustix::fs::statvfs(dir) {
            let free = stat.f_bavail.saturating_mul(stat.f_frsize);
            if free < NEARLY_FULL {
                let enospc = std::io::Error::from_raw_os_error(libc_enospc());
                text.push_str(&format!("; {enospc}: {free} bytes free in {}", dir.display()));
            }
        }
        if let Some(error) = &*self.last_error.lock().unwrap_or_else(|p| p.into_inner()) {
            text.push_str(&format!("; last error: {error}"));
        }
        text
    }
}

/// ENOSPC, whose message ("No space left on device") names a full disk
/// the way every other tool does.
fn libc_enospc() -> i32 {
    rustix::io::Errno::NOSPC.raw_os_error()
}
