//! How many forms a relay has with the broker, for whoever runs it:
//! `elicit serve` ends a session whose host left sooner while a form
//! waits, since nobody would be there to see what its answer leads to.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The count of forms waiting for the broker's reply; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Asked(Arc<AtomicUsize>);

impl Asked {
    /// Forms waiting now.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Records the number waiting now (the actor's own count).
    pub fn set(&self, count: usize) {
        self.0.store(count, Ordering::Relaxed);
    }
}
