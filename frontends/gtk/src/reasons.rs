//! Words for why the broker withdrew a form.

use elicit_i18n::{fill, tr};

/// A sentence saying why the form from `server` was withdrawn, for the
/// banner that replaces it.
pub fn withdrawn_notice(server: &str, reason: &str) -> String {
    // Whole sentences, not "The request from {server} " + a phrase, so that
    // each language can build its own.
    let template = match reason {
        "cancelled" => tr("The request from {server} was cancelled by the server."),
        "client-gone" => tr("The request from {server} was withdrawn: the agent went away."),
        "timeout" => tr("The request from {server} timed out."),
        "answered" => tr("The request from {server} was answered elsewhere."),
        "claimed" => tr("The request from {server} was taken over by another program."),
        "closed" => tr("The request from {server} was withdrawn: its session was closed."),
        "unanswered" => {
            tr("The request from {server} went to another window: this one did not answer in time.")
        }
        _ => tr("The request from {server} was withdrawn ({reason})."),
    };
    fill(&template, &[("server", &server), ("reason", &reason)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_sentences() {
        assert_eq!(
            withdrawn_notice("files", "timeout"),
            "The request from files timed out."
        );
        assert_eq!(
            withdrawn_notice("files", "answered"),
            "The request from files was answered elsewhere."
        );
        assert_eq!(
            withdrawn_notice("files", "odd"),
            "The request from files was withdrawn (odd)."
        );
    }
}
