//! The seam where policy rules decide a form before any human sees it.

use elicit_proto::dbus::Origin;
use elicit_proto::{Answer, Elicitation};

/// A decision that spares the human.
#[derive(Debug, Clone)]
pub struct PolicyVerdict {
    /// The outcome to deliver.
    pub answer: Answer,
    /// Why, as history records it.
    pub reason: String,
    /// Which rule decided (file and rule, or a remembered choice).
    pub decided_by: String,
}

/// Decides forms by the user's rules. Runs on a blocking thread, so it may
/// take its time without stalling other sessions.
pub trait PolicyHook: Send + Sync {
    /// `None` asks the human.
    fn decide(&self, request: &Elicitation, origin: &Origin, session: &str) -> Option<PolicyVerdict>;
}
