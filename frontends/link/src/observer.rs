//! What the link tells a front-end about the broker, apart from forms.

use std::collections::HashMap;

/// How the broker's name changed owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerChange {
    /// The broker left and nobody owns the name: forms will come once it
    /// is back.
    Left,
    /// Another program took the name over at once. The link registers with
    /// it next, and believes it only if it proves itself.
    Replaced,
}

/// Hears how the link to the broker fares. Every method has a default that
/// does nothing, so that a front-end implements only what it shows. Like
/// [`crate::Frontend`]'s, the methods must return at once.
pub trait Observer: Send + Sync + 'static {
    /// Registered with the broker: at start, or again after a restart.
    fn registered(&self) {}

    /// Registration failed: no broker yet (the link registers once one
    /// comes), or the owner of the name is not the broker it claims to be.
    /// `why` may quote what the owner of the name replied, so its control
    /// characters come escaped: it is safe to print on a terminal.
    fn not_registered(&self, why: &str) {
        let _ = why;
    }

    /// The broker that was believed is gone: every form it showed and
    /// every token it gave is void.
    fn broker_left(&self, change: OwnerChange) {
        let _ = change;
    }

    /// How many forms wait, queued behind the presented one, per session.
    /// Sent only with [`crate::Profile::backlog`].
    fn backlog(&self, counts: HashMap<String, usize>) {
        let _ = counts;
    }
}
