//! What the policy says about a form, and who said it.

use elicit_proto::{Answer, ElicitationAction};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The outcome of a policy decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", content = "content", rename_all = "lowercase")]
pub enum Verdict {
    /// Show the form to the human.
    Ask,
    /// Answer `decline` without asking.
    Decline,
    /// Answer `cancel` without asking.
    Cancel,
    /// Answer `accept` with this content, already validated against the
    /// request: an object of field values in form mode, `null` in URL mode
    /// (where accept is bare consent).
    Accept(Value),
}

impl Verdict {
    /// The answer to send to the server; `None` for [`Verdict::Ask`].
    pub fn to_answer(&self) -> Option<Answer> {
        match self {
            Verdict::Ask => None,
            Verdict::Decline => Some(Answer::bare(ElicitationAction::Decline)),
            Verdict::Cancel => Some(Answer::bare(ElicitationAction::Cancel)),
            Verdict::Accept(Value::Null) => Some(Answer::bare(ElicitationAction::Accept)),
            Verdict::Accept(content) => Some(Answer {
                action: ElicitationAction::Accept,
                content: Some(content.clone()),
            }),
        }
    }

    /// `"ask"`, `"decline"`, `"cancel"` or `"accept"`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Ask => "ask",
            Verdict::Decline => "decline",
            Verdict::Cancel => "cancel",
            Verdict::Accept(_) => "accept",
        }
    }
}

/// A verdict with its provenance, as history and `elicit policy test` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// What to do with the form.
    pub verdict: Verdict,
    /// Who decided: `"50-elicitd-defaults.rhai: secret-guard"` (file and
    /// rule), `"remembered #3"`, or `"default"` when no rule spoke.
    pub decided_by: String,
    /// Why, when the rule said so or when a rule failed.
    pub reason: Option<String>,
}

impl Decision {
    /// The decision when nothing else decides: ask the human.
    pub fn default_ask() -> Self {
        Decision {
            verdict: Verdict::Ask,
            decided_by: "default".into(),
            reason: None,
        }
    }
}
