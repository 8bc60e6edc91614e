//! The link's errors.

/// Why the link could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// Connecting, serving `Frontend1` or subscribing failed.
    #[error("D-Bus: {0}")]
    Bus(#[from] zbus::Error),
}

/// A front-end refused a form because it is closing; the broker hears
/// this as a failed `Show` and presents the form elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the front-end is shutting down")]
pub struct ShuttingDown;
