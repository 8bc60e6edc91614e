//! String formats, each delegated to a crate made for it.

use chrono::{DateTime, NaiveDate};

use crate::form::TextFormat;

/// Checks `text` against `format`; the error is worded for the user.
pub(crate) fn check(format: TextFormat, text: &str) -> Result<(), String> {
    let ok = match format {
        TextFormat::Email => email_address::EmailAddress::parse_with_options(
            text,
            email_address::Options::default().without_display_text(),
        )
        .is_ok(),
        // RFC 3986 `URI`: a scheme is required, so relative references fail.
        TextFormat::Uri => fluent_uri::Uri::parse(text).is_ok(),
        // chrono's `%Y-%m-%d` also takes unpadded or signed years; RFC 3339
        // full-date is exactly ten characters, so the length closes that gap.
        TextFormat::Date => text.len() == 10 && NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok(),
        TextFormat::DateTime => DateTime::parse_from_rfc3339(text).is_ok(),
    };
    if ok {
        Ok(())
    } else {
        Err(match format {
            TextFormat::Email => "must be an email address, such as name@example.com".into(),
            TextFormat::Uri => "must be an absolute URI with a scheme, such as https://example.com/".into(),
            TextFormat::Date => "must be a real date written YYYY-MM-DD".into(),
            TextFormat::DateTime => {
                "must be a date and time with an offset, such as 2026-01-31T09:30:00+01:00".into()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email() {
        assert!(check(TextFormat::Email, "jane.smith@example.com").is_ok());
        assert!(check(TextFormat::Email, "jane.example.com").is_err());
        assert!(check(TextFormat::Email, "Jane <jane@example.com>").is_err());
    }

    #[test]
    fn uri() {
        assert!(check(TextFormat::Uri, "https://example.org/me").is_ok());
        assert!(check(TextFormat::Uri, "urn:isbn:0451450523").is_ok());
        assert!(check(TextFormat::Uri, "/me").is_err());
        assert!(check(TextFormat::Uri, "not a uri").is_err());
    }

    #[test]
    fn date() {
        assert!(check(TextFormat::Date, "1990-02-28").is_ok());
        assert!(check(TextFormat::Date, "2024-02-29").is_ok());
        assert!(check(TextFormat::Date, "2026-02-30").is_err());
        assert!(check(TextFormat::Date, "2026-2-3").is_err());
        assert!(check(TextFormat::Date, "+2026-02-03").is_err());
    }

    #[test]
    fn date_time() {
        assert!(check(TextFormat::DateTime, "2026-11-29T10:00:00Z").is_ok());
        assert!(check(TextFormat::DateTime, "2026-11-29T10:00:00.5+01:00").is_ok());
        assert!(check(TextFormat::DateTime, "2026-11-29T10:00:00").is_err());
        assert!(check(TextFormat::DateTime, "2026-11-29").is_err());
    }
}
