//! A value that must never reach a log, an error message or a terminal:
//! tokens, codes, client secrets, PKCE verifiers.

use std::fmt;

/// A secret string; `Debug` and `Display` print `[redacted]`.
///
/// The value is reached only through [`Secret::expose`], so that every
/// place that lets it out is a deliberate, greppable call.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself, for the one request or file that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_and_display_hide_the_value() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "[redacted]");
        assert_eq!(format!("{secret}"), "[redacted]");
        assert_eq!(format!("{:?}", Some(&secret)), "Some([redacted])");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn serializes_as_the_plain_string() {
        let json = serde_json::to_string(&Secret::new("t")).unwrap_or_default();
        assert_eq!(json, "\"t\"");
    }
}
