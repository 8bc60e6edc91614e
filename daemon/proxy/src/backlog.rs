//! How much is queued for one writer, so that a peer that stops reading
//! slows the other side down instead of growing the proxy without end.
//!
//! The relay reads the next line from a peer only while the queue towards
//! the other peer holds less than [`QUEUE_BYTES`]: once the pipe towards a
//! stalled server is full, the host's own writes block, as they would with
//! no proxy in between. Lines the proxy writes on its own (keep-alives,
//! answers) are few and small, and never wait.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The bytes queued towards one peer above which the relay stops reading
/// from the other. Above one pipe-full, so that a burst never stalls a
/// reading peer; small against the 64 MB a proxy may use in all.
pub const QUEUE_BYTES: usize = 4 * 1024 * 1024;

/// The bytes queued for one writer, shared by the relay and the writer.
#[derive(Debug, Default)]
pub struct Backlog {
    bytes: AtomicUsize,
    /// Set when the writer has stopped: its peer is gone, nothing drains,
    /// and waiting for room would never end.
    closed: AtomicBool,
    drained: Notify,
}

impl Backlog {
    /// Counts `n` bytes just queued.
    pub fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
    }

    /// Counts `n` bytes written out, and wakes whoever waits for room
    /// when this drain made some.
    pub fn drained(&self, n: usize) {
        let before = self.bytes.fetch_sub(n, Ordering::AcqRel);
        if before >= QUEUE_BYTES && before - n < QUEUE_BYTES {
            self.drained.notify_waiters();
        }
    }

    /// The writer has stopped: nobody need wait for it any more.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.drained.notify_waiters();
    }

    fn has_room(&self) -> bool {
        self.closed.load(Ordering::Acquire) || self.queued() < QUEUE_BYTES
    }

    /// The bytes queued now.
    pub fn queued(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// Returns once fewer than [`QUEUE_BYTES`] are queued, or the writer
    /// has stopped. Cancel-safe: it takes nothing.
    pub async fn room(&self) {
        if self.has_room() {
            return;
        }
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so that a drain between the
            // check and the wait is not missed.
            drained.as_mut().enable();
            if self.has_room() {
                return;
            }
            drained.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn room_waits_for_a_drain_below_the_cap() {
        let backlog = Arc::new(Backlog::default());
        backlog.room().await;
        backlog.add(QUEUE_BYTES);
        let mut waiting = tokio::task::JoinSet::new();
        waiting.spawn({
            let backlog = backlog.clone();
            async move { backlog.room().await }
        });
        tokio::task::yield_now().await;
        assert!(waiting.try_join_next().is_none(), "a full queue has no room");
        backlog.drained(1);
        tokio::time::timeout(Duration::from_secs(5), waiting.join_next())
            .await
            .expect("room after a drain")
            .expect("the waiting task")
            .expect("task");
    }

    #[tokio::test]
    async fn a_stopped_writer_never_keeps_anyone_waiting() {
        let backlog = Backlog::default();
        backlog.add(2 * QUEUE_BYTES);
        backlog.close();
        tokio::time::timeout(Duration::from_secs(5), backlog.room())
            .await
            .expect("room once closed");
    }
}
