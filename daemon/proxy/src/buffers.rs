//! Line buffers handed back by the writers for the readers to fill again.
//!
//! A large result arrives in one freshly allocated buffer and is freed once
//! written; glibc gives such memory back to the system at once, so the next
//! line faults every page in again. Under `perf` that churn cost more than
//! reading the line; reusing a few buffers avoids it.

use std::sync::{Arc, Mutex};

/// How many spare buffers are kept.
const KEPT: usize = 8;

/// The largest buffer kept: a rare huge line is not held for the life of
/// the proxy.
const KEPT_CAPACITY: usize = 1024 * 1024;

/// A small shared pool of empty line buffers.
#[derive(Debug, Clone, Default)]
pub struct Buffers(Arc<Mutex<Vec<Vec<u8>>>>);

impl Buffers {
    /// An empty buffer, reused when one is spare.
    pub fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .ok()
            .and_then(|mut spare| spare.pop())
            .unwrap_or_default()
    }

    /// Returns a buffer whose line has been written.
    pub fn give(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() > KEPT_CAPACITY {
            return;
        }
        buffer.clear();
        if let Ok(mut spare) = self.0.lock()
            && spare.len() < KEPT
        {
            spare.push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_empty_buffers_and_drops_huge_ones() {
        let buffers = Buffers::default();
        let mut line = Vec::with_capacity(1000);
        line.extend_from_slice(b"spent");
        buffers.give(line);
        let again = buffers.take();
        assert!(again.is_empty());
        assert!(again.capacity() >= 1000);
        buffers.give(Vec::with_capacity(KEPT_CAPACITY + 1));
        assert_eq!(buffers.take().capacity(), 0);
    }
}
