//! Short hints of what a field wants, shown beside its input.

use elicit_i18n::{fill, tr, trn};
use elicit_mcp::FieldKind;

/// A short hint of what to enter: the format to type, the allowed range
/// or length, the number of items to pick. `None` when the input says it
/// all (a checkbox, a single select).
///
/// In the user's language. Numbers are written as the field takes them
/// (a decimal point, whatever the locale's separator), so that the hint
/// shows what to type.
pub fn kind_hint(kind: &FieldKind) -> Option<String> {
    let parts: Vec<String> = match kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
            pattern: _,
        } => {
            let mut parts: Vec<String> = format.iter().map(|f| f.hint().to_owned()).collect();
            let count = max_length.or(*min_length).unwrap_or(0);
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            // TRANSLATORS: {range} is "1-40", "at least 1", "at most 40" or "exactly 8".
            let noun = trn("{range} character", "{range} characters", count);
            parts.extend(range(*min_length, *max_length).map(|r| fill(&noun, &[("range", &r)])));
            parts
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let what = if *integer {
                tr("whole number")
            } else {
                tr("number")
            };
            let bounds = range(*minimum, *maximum);
            vec![match bounds {
                // TRANSLATORS: {what} is "whole number" or "number", {range} as above.
                Some(bounds) => fill(&tr("{what}, {range}"), &[("what", &what), ("range", &bounds)]),
                None => what,
            }]
        }
        FieldKind::Boolean | FieldKind::Choice { .. } => Vec::new(),
        FieldKind::MultiChoice {
            min_items, max_items, ..
        } => vec![match range(*min_items, *max_items) {
            Some(range) => fill(&tr("pick {range}"), &[("range", &range)]),
            None => tr("pick any"),
        }],
    };
    if parts.is_empty() {
        None
    } else {
        Some(parts.join(", "))
    }
}

/// "1-40", "at least 1", "at most 40", or nothing.
fn range<T: PartialEq + std::fmt::Display>(min: Option<T>, max: Option<T>) -> Option<String> {
    match (min, max) {
        (Some(min), Some(max)) if min == max => Some(fill(&tr("exactly {n}"), &[("n", &min)])),
        (Some(min), Some(max)) => Some(fill(&tr("{min}-{max}"), &[("min", &min), ("max", &max)])),
        (Some(min), None) => Some(fill(&tr("at least {n}"), &[("n", &min)])),
        (None, Some(max)) => Some(fill(&tr("at most {n}"), &[("n", &max)])),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_mcp::TextFormat;

    #[test]
    fn hints_name_format_and_bounds() {
        let date = FieldKind::Text {
            format: Some(TextFormat::Date),
            min_length: None,
            max_length: None,
            pattern: None,
        };
        assert_eq!(kind_hint(&date).as_deref(), Some("YYYY-MM-DD"));
        let count = FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(100.0),
        };
        assert_eq!(kind_hint(&count).as_deref(), Some("whole number, 1-100"));
        let multi = FieldKind::MultiChoice {
            choices: Vec::new(),
            min_items: Some(1),
            max_items: None,
        };
        assert_eq!(kind_hint(&multi).as_deref(), Some("pick at least 1"));
        assert_eq!(kind_hint(&FieldKind::Boolean), None);
        let name = FieldKind::Text {
            format: None,
            min_length: Some(1),
            max_length: None,
            pattern: None,
        };
        assert_eq!(kind_hint(&name).as_deref(), Some("at least 1 character"));
    }
}
