//! Idleness: whether anything keeps the daemon running, and since when.
//!
//! sled 0.34's I/O threads wake seven times a second whatever the daemon
//! does, and 0.34 has no setting for it: the only idle daemon that wakes
//! nobody is one that has exited. So the daemon leaves after a while with
//! nothing to do (see `crate::idle_exit`), and D-Bus activation brings it
//! back on the next call.
//!
//! What keeps it: an open session, and so every form (queued, shown, or
//! answered and not yet acknowledged: each belongs to a session), and a
//! call that may open or resume a session while it runs. Front-ends and
//! `Watch` callers do not: they stay on the bus across an exit and
//! register again when the name returns, so that a front-end left open
//! does not keep sled's threads waking all day.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::Broker;

/// The calls in progress that may open a session, and the last change.
#[derive(Debug)]
pub(crate) struct Idleness {
    in_flight: AtomicUsize,
    /// When a session last opened or closed, or such a call ended.
    last_active: Mutex<Instant>,
    changed: Notify,
}

impl Default for Idleness {
    fn default() -> Self {
        Idleness {
            in_flight: AtomicUsize::new(0),
            last_active: Mutex::new(Instant::now()),
            changed: Notify::new(),
        }
    }
}

impl Idleness {
    fn touch(&self) {
        *self.last_active.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        // One waiter, the idle task; a permit is kept if it is not waiting.
        self.changed.notify_one();
    }
}

/// A call that may open or resume a session, in progress: the daemon is
/// not idle while it lives.
#[derive(Debug)]
pub struct Busy<'a>(&'a Idleness);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

impl Broker {
    /// Marks a call that may open or resume a session as running, until
    /// the guard drops; take it before the call's first `.await`.
    pub fn busy(&self) -> Busy<'_> {
        self.idleness.in_flight.fetch_add(1, Ordering::SeqCst);
        self.idleness.touch();
        Busy(&self.idleness)
    }

    /// A session opened or closed: the idle clock starts again.
    pub(crate) fn activity(&self) {
        self.idleness.touch();
    }

    /// How long nothing has kept the daemon running; `None` while
    /// something does.
    pub fn idle_for(&self) -> Option<Duration> {
        if self.idleness.in_flight.load(Ordering::SeqCst) > 0 || !self.lock().idle() {
            return None;
        }
        let since = *self
            .idleness
            .last_active
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        Some(since.elapsed())
    }

    /// Resolves at the next change that [`Broker::idle_for`] may see.
    pub async fn idle_changed(&self) {
        self.idleness.changed.notified().await;
    }
}
