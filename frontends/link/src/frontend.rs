//! The `dev.elicitd.Frontend1` interface as a front-end implements it.

use elicit_proto::dbus::{Dict, Origin, OriginDict, dict_str, dict_u64};

use crate::ShuttingDown;

/// A form the broker asked this front-end to show.
#[derive(Debug, Clone)]
pub struct ShowRequest {
    /// The broker's form id.
    pub form: String,
    /// The presentation token to answer with.
    pub token: String,
    /// The `elicitation/create` params as JSON text.
    pub request_json: String,
    /// Who asks.
    pub origin: Origin,
    /// The asking session's id.
    pub session: String,
    /// When the form was queued, in ms since the epoch.
    pub queued_at_ms: u64,
    /// When it will be cancelled, in ms since the epoch; 0 for never.
    pub deadline_ms: u64,
}

impl ShowRequest {
    /// The request of a `Show` call; what `info` lacks reads as empty, so
    /// that an older broker's forms still show.
    pub fn from_call(form: String, token: String, request_json: String, info: &Dict) -> ShowRequest {
        ShowRequest {
            form,
            token,
            request_json,
            origin: Origin::from_dict(info),
            session: dict_str(info, "session").unwrap_or_default(),
            queued_at_ms: dict_u64(info, "queued-at-ms").unwrap_or(0),
            deadline_ms: dict_u64(info, "deadline-ms").unwrap_or(0),
        }
    }
}

/// Whether a `Show` with `info` comes too late at `now_ms` (ms since the
/// epoch): the broker stopped waiting for its reply at `reply-by-ms` and
/// gave the form to another front-end, and tells this one to withdraw it.
/// A front-end that was stopped (Ctrl-Z) reads such a `Show` on waking;
/// showing it would put up a form someone else is answering. An older
/// broker sends no `reply-by-ms`: nothing is stale.
pub(crate) fn is_stale(info: &Dict, now_ms: u64) -> bool {
    dict_u64(info, "reply-by-ms").is_some_and(|by| now_ms > by)
}

/// What a front-end does when the broker calls `dev.elicitd.Frontend1`.
///
/// The calls reach it only from the broker this front-end registered with
/// and believes; the link refuses every other caller first. Both methods
/// must return at once: the broker waits for `Show`'s reply, and no human
/// wait may sit inside a D-Bus call. A front-end hands the request to its
/// own loop (a channel) and draws there.
pub trait Frontend: Send + Sync + 'static {
    /// Takes a form to show. [`ShuttingDown`] tells the broker to present
    /// it elsewhere.
    fn show(&self, request: ShowRequest) -> Result<(), ShuttingDown>;

    /// Stops showing `form`, for `reason` (`cancelled`, `client-gone`,
    /// `timeout`, `answered`, `claimed`, `closed`…). A form the front-end
    /// no longer has is no error.
    fn withdraw(&self, form: String, reason: String);
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::zvariant::{OwnedValue, Str};

    #[test]
    fn a_show_read_after_its_reply_time_is_stale() {
        let mut info = Dict::new();
        assert!(!is_stale(&info, u64::MAX), "an older broker's Show");
        info.insert("reply-by-ms".into(), OwnedValue::from(5_000u64));
        assert!(!is_stale(&info, 4_999));
        assert!(!is_stale(&info, 5_000));
        assert!(is_stale(&info, 5_001));
    }

    #[test]
    fn a_show_call_reads_its_info_and_tolerates_what_is_missing() {
        let origin = Origin {
            server: Some("bank".into()),
            host: Some("agent".into()),
            ..Origin::default()
        };
        let mut info = origin.to_dict();
        info.insert("session".into(), OwnedValue::from(Str::from("7")));
        info.insert("queued-at-ms".into(), OwnedValue::from(1_000u64));
        info.insert("deadline-ms".into(), OwnedValue::from(2_000u64));
        let request = ShowRequest::from_call("1".into(), "t".into(), "{}".into(), &info);
        assert_eq!(request.origin.server.as_deref(), Some("bank"));
        assert_eq!(request.origin.host.as_deref(), Some("agent"));
        assert_eq!(
            (
                request.session.as_str(),
                request.queued_at_ms,
                request.deadline_ms
            ),
            ("7", 1_000, 2_000)
        );

        let bare = ShowRequest::from_call("1".into(), "t".into(), "{}".into(), &Dict::new());
        assert_eq!(
            (bare.session.as_str(), bare.queued_at_ms, bare.deadline_ms),
            ("", 0, 0)
        );
    }
}
