//! The records the store keeps: JSON under big-endian keys.

use elicit_proto::Answer;
use elicit_proto::dbus::Origin;
use serde::{Deserialize, Serialize};

/// One client session as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session id (the last element of its object path).
    pub id: String,
    /// The unique bus name of the owner when last seen.
    pub owner: String,
    /// The secret that re-attaches an owner.
    pub resume_token: String,
    /// Who is asking.
    pub origin: Origin,
    /// When the session opened, in milliseconds since the epoch.
    pub opened_ms: u64,
}

/// Where a form is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormState {
    /// Waiting in its session's queue.
    Queued,
    /// Shown by a front-end or claimed by a control client.
    Presented,
    /// Has an outcome the owner has not acknowledged yet.
    Answered,
}

impl FormState {
    /// The state's name as signals and listings give it.
    pub fn name(self) -> &'static str {
        match self {
            FormState::Queued => "queued",
            FormState::Presented => "presented",
            FormState::Answered => "answered",
        }
    }
}

/// One form as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FormRecord {
    /// The form id, unique for the life of the store.
    pub id: u64,
    /// The session it belongs to.
    pub session: String,
    /// The `elicitation/create` params as the server sent them.
    pub request: super::RequestText,
    /// The submitter's idempotency key, if it gave one.
    pub submission_id: Option<String>,
    /// Where the form is.
    pub state: FormState,
    /// The outcome, while answered but not yet delivered; never copied
    /// to history. In sled its content is absent or `{}` (which holds
    /// nothing the user typed): any other content lives in an answer file
    /// (see `crate::answers`).
    pub answer: Option<Answer>,
    /// The answer's content is in `answers/<id>`, not here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_in_file: bool,
    /// Why it ended as it did (`answered`, `timeout`, a rule's reason …).
    pub reason: Option<String>,
    /// Who decided: a front-end's name, a control client, `timeout`.
    pub answered_by: Option<String>,
    /// When it was submitted, in milliseconds since the epoch.
    pub created_ms: u64,
    /// When it expires, in milliseconds since the epoch.
    pub deadline_ms: Option<u64>,
}

/// A finished form: who asked, what, which fields, the outcome — never the
/// values of an answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryRecord {
    /// The form id.
    pub form: u64,
    /// The session id.
    pub session: String,
    /// Who asked.
    pub origin: Origin,
    /// `form` or `url`.
    pub mode: String,
    /// The message shown.
    pub message: String,
    /// The names of the fields asked for.
    pub fields: Vec<String>,
    /// For URL mode, the host of the URL.
    pub url_host: Option<String>,
    /// accept, decline or cancel.
    pub outcome: String,
    /// Why (`answered`, `timeout`, `client-gone`, `closed`, a rule's …).
    pub reason: String,
    /// Who decided.
    pub answered_by: Option<String>,
    /// Whether the owner received the outcome.
    pub delivered: bool,
    /// Submission time, in milliseconds since the epoch.
    pub created_ms: u64,
    /// End time, in milliseconds since the epoch.
    pub finished_ms: u64,
}
