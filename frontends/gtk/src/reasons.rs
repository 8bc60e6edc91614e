//! Words for why the broker withdrew a form.

/// A sentence saying why the form from `server` was withdrawn, for the
/// banner that replaces it.
pub fn withdrawn_notice(server: &str, reason: &str) -> String {
    let why = match reason {
        "cancelled" => "was cancelled by the server",
        "client-gone" => "was withdrawn: the agent went away",
        "timeout" => "timed out",
        "answered" => "was answered elsewhere",
        "claimed" => "was taken over by another program",
        "closed" => "was withdrawn: its session was closed",
        other => return format!("The request from {server} was withdrawn ({other})."),
    };
    format!("The request from {server} {why}.")
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
