//! A small cancellation flag shared between the relay and its tasks.

use tokio::sync::watch;

/// Cancelled once, seen by every clone.
#[derive(Debug, Clone)]
pub struct Cancel {
    sender: std::sync::Arc<watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel {
            sender: std::sync::Arc::new(watch::channel(false).0),
        }
    }
}

impl Cancel {
    /// A fresh flag, not cancelled.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Cancels; idempotent.
    pub fn cancel(&self) {
        self.sender.send_replace(true);
    }

    /// Whether it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once cancelled.
    pub async fn cancelled(&self) {
        let mut receiver = self.sender.subscribe();
        // `wait_for` fails only when the sender is gone, which cannot
        // happen while `self` holds it.
        let _ = receiver.wait_for(|cancelled| *cancelled).await;
    }
}
