//! One presented form, as the user interface keeps it ([`Entry`], shared
//! with the other front-ends), and the words the terminal shows about it.

pub use elicit_form::Body;
use elicit_i18n::{fill, tr};
pub use elicit_link::Entry;

/// "SERVER asks, for HOST[, in CWD]": who asks, for a heading.
pub fn heading(entry: &Entry) -> String {
    let (server, host) = (entry.server(), entry.host());
    match &entry.origin.cwd {
        Some(cwd) => fill(
            &tr("{server} asks, for {host}, in {cwd}"),
            &[("server", &server), ("host", &host), ("cwd", cwd)],
        ),
        None => fill(
            &tr("{server} asks, for {host}"),
            &[("server", &server), ("host", &host)],
        ),
    }
}

/// Words for a `Withdraw` reason, to follow "… was withdrawn: ".
pub fn reason_text(reason: &str) -> String {
    match reason {
        "cancelled" => tr("cancelled by the server"),
        "client-gone" => tr("the client went away"),
        "timeout" => tr("timed out"),
        "answered" => tr("answered elsewhere"),
        "claimed" => tr("taken over by another program"),
        "closed" => tr("the session was closed"),
        "unanswered" => tr("moved elsewhere: this window did not answer in time"),
        other => other.to_owned(),
    }
}

/// How long ago `since_ms` was, as `12s`, `3m05s` or `1h02m`.
pub fn age(now_ms: u64, since_ms: u64) -> String {
    duration(now_ms.saturating_sub(since_ms) / 1000)
}

/// A number of seconds as `12s`, `3m05s` or `1h02m`.
pub fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// Now, in ms since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(5_000, 0), "5s");
        assert_eq!(age(125_000, 0), "2m05s");
        assert_eq!(age(3_725_000, 0), "1h02m");
        assert_eq!(age(0, 10), "0s");
    }
}
