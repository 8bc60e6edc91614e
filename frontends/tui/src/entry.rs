//! One presented form, as the user interface keeps it.

pub use elicit_form::Body;
use elicit_form::read_request;
use elicit_i18n::{fill, tr};
use elicit_proto::dbus::Origin;

use crate::bus::ShowRequest;

/// A form the broker presented here.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The broker's form id.
    pub form: String,
    /// The presentation token.
    pub token: String,
    /// Who asks.
    pub origin: Origin,
    /// The asking session.
    pub session: String,
    /// When it was queued (ms since the epoch).
    pub queued_at_ms: u64,
    /// When it times out (ms since the epoch), 0 for never.
    pub deadline_ms: u64,
    /// What the server says to the user.
    pub message: String,
    /// What it asks for.
    pub body: Body,
    /// An answer is on its way to the broker: input waits.
    pub sending: bool,
    /// A line about this form (a failed answer, a failed browser).
    pub status: Option<String>,
}

impl Entry {
    /// The entry for a `Show` call.
    pub fn new(show: ShowRequest) -> Self {
        let (message, body) = read_request(&show.request_json);
        Entry {
            form: show.form,
            token: show.token,
            origin: show.origin,
            session: show.session,
            queued_at_ms: show.queued_at_ms,
            deadline_ms: show.deadline_ms,
            message,
            body,
            sending: false,
            status: None,
        }
    }

    /// The server's name, for headings: as the asker sent it.
    pub fn server(&self) -> String {
        elicit_form::server_name(&self.origin)
    }

    /// The host's (agent's) name, for headings: as the asker sent it.
    pub fn host(&self) -> String {
        elicit_form::host_name(&self.origin)
    }

    /// "SERVER asks, for HOST[, in CWD]": who asks, for a heading.
    pub fn heading(&self) -> String {
        let (server, host) = (self.server(), self.host());
        match &self.origin.cwd {
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
