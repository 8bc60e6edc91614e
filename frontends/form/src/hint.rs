//! Short hints of what a field wants, shown beside its input.

use elicit_proto::FieldKind;

/// A short hint of what to enter: the format to type, the allowed range
/// or length, the number of items to pick. `None` when the input says it
/// all (a checkbox, a single select).
///
/// Plain ASCII, so that it reads the same on a dumb terminal.
pub fn kind_hint(kind: &FieldKind) -> Option<String> {
    let parts: Vec<String> = match kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
            pattern: _,
        } => {
            let mut parts: Vec<String> = format.iter().map(|f| f.hint().to_owned()).collect();
            let one = max_length.or(*min_length) == Some(1);
            let noun = if one { "character" } else { "characters" };
            parts.extend(range(*min_length, *max_length).map(|r| format!("{r} {noun}")));
            parts
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let what = if *integer { "whole number" } else { "number" };
            let bounds = range(*minimum, *maximum);
            vec![match bounds {
                Some(bounds) => format!("{what}, {bounds}"),
                None => what.to_owned(),
            }]
        }
        FieldKind::Boolean | FieldKind::Choice { .. } => Vec::new(),
        FieldKind::MultiChoice {
            min_items, max_items, ..
        } => vec![match range(*min_items, *max_items) {
            Some(range) => format!("pick {range}"),
            None => "pick any".to_owned(),
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
        (Some(min), Some(max)) if min == max => Some(format!("exactly {min}")),
        (Some(min), Some(max)) => Some(format!("{min}-{max}")),
        (Some(min), None) => Some(format!("at least {min}")),
        (None, Some(max)) => Some(format!("at most {max}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_proto::TextFormat;

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
