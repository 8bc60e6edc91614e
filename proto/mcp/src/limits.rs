//! Size limits applied to every elicitation before anyone sees it.

use serde::{Deserialize, Serialize};

/// Upper bounds on what one elicitation may carry.
///
/// They keep a misbehaving server from flooding a front-end or the queue;
/// the defaults are generous for any real form (the largest form of the
/// reference server has 12 fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Limits {
    /// Bytes of the whole request as JSON text.
    pub max_request_bytes: usize,
    /// Bytes of the `message` shown to the user.
    pub max_message_bytes: usize,
    /// Properties (fields) in one form.
    pub max_properties: usize,
    /// Choices in one single- or multi-select field.
    pub max_choices: usize,
    /// Bytes of a URL in URL mode.
    pub max_url_bytes: usize,
    /// Bytes of one `pattern` source.
    pub max_pattern_bytes: usize,
    /// Bytes of an answer's content as JSON text.
    pub max_answer_bytes: usize,
}

impl Limits {
    /// No limit at all: for a front-end reading a request the broker has
    /// checked already, with limits of its own that may be larger than the
    /// defaults; it must never refuse what the broker accepted.
    pub const UNLIMITED: Limits = Limits {
        max_request_bytes: usize::MAX,
        max_message_bytes: usize::MAX,
        max_properties: usize::MAX,
        max_choices: usize::MAX,
        max_url_bytes: usize::MAX,
        max_pattern_bytes: usize::MAX,
        max_answer_bytes: usize::MAX,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request_bytes: 256 * 1024,
            max_message_bytes: 8 * 1024,
            max_properties: 64,
            max_choices: 256,
            max_url_bytes: 8 * 1024,
            max_pattern_bytes: 1024,
            max_answer_bytes: 256 * 1024,
        }
    }
}
