//! Choice fields: `enum`, titled `oneOf`/`anyOf` and multi-select arrays,
//! with their counts, legacy `enumNames` and uniqueness checked.

use serde_json::Value;

use super::PropertyCheck;
use crate::form::{Choice, FieldKind};
use crate::limits::Limits;

pub(super) fn parse_multi_choice(check: &mut PropertyCheck<'_>, limits: &Limits) -> Option<FieldKind> {
    let Some(items) = check.object.get("items") else {
        check.fail(
            "free-array",
            "an array is allowed only as a multi-select: it needs `items` with `enum` or `anyOf`",
        );
        return None;
    };
    let Some(items) = items.as_object() else {
        check.fail("free-array", "`items` must be an object with `enum` or `anyOf`");
        return None;
    };
    match items.get("type") {
        None => {}
        Some(Value::String(t)) if t == "string" => {}
        Some(Value::String(t)) if t == "object" => {
            check.fail("array-of-objects", "arrays of objects are not allowed");
            return None;
        }
        Some(other) => {
            check.fail(
                "free-array",
                format!("multi-select items must be strings, not of type {other}"),
            );
            return None;
        }
    }
    let choices = if items.contains_key("enum") {
        parse_enum(check, items.get("enum"), "items.enum", limits)?
    } else if items.contains_key("anyOf") {
        parse_titled(check, items.get("anyOf"), "items.anyOf", limits)?
    } else {
        check.fail(
            "free-array",
            "an array is allowed only as a multi-select: `items` needs `enum` or `anyOf`",
        );
        return None;
    };
    let min_items = check.count("minItems");
    let max_items = check.count("maxItems");
    check.min_max(("minItems", min_items), ("maxItems", max_items));
    if let Some(min) = min_items
        && min > choices.len() as u64
    {
        check.fail(
            "contradictory-bounds",
            format!("`minItems` {min} is more than the {} choices", choices.len()),
        );
    }
    Some(FieldKind::MultiChoice {
        choices,
        min_items,
        max_items,
    })
}

fn check_choice_count(check: &mut PropertyCheck<'_>, key: &str, len: usize, limits: &Limits) -> bool {
    if len == 0 {
        check.fail("empty-enum", format!("`{key}` needs at least one choice"));
        return false;
    }
    if len > limits.max_choices {
        check.fail(
            "too-many-choices",
            format!(
                "`{key}` has {len} choices, more than the limit of {}",
                limits.max_choices
            ),
        );
        return false;
    }
    true
}

pub(super) fn parse_enum(
    check: &mut PropertyCheck<'_>,
    values: Option<&Value>,
    key: &str,
    limits: &Limits,
) -> Option<Vec<Choice>> {
    let Some(values) = values.and_then(Value::as_array) else {
        check.fail("bad-enum", format!("`{key}` must be a list of strings"));
        return None;
    };
    if !check_choice_count(check, key, values.len(), limits) {
        return None;
    }
    let mut choices = Vec::with_capacity(values.len());
    for value in values {
        let Some(value) = value.as_str() else {
            check.fail("bad-enum", format!("`{key}` must hold strings only, not {value}"));
            return None;
        };
        choices.push(Choice {
            value: value.to_owned(),
            label: value.to_owned(),
        });
    }
    unique(check, key, &choices).then_some(choices)
}

pub(super) fn parse_titled(
    check: &mut PropertyCheck<'_>,
    values: Option<&Value>,
    key: &str,
    limits: &Limits,
) -> Option<Vec<Choice>> {
    let Some(values) = values.and_then(Value::as_array) else {
        check.fail(
            "bad-enum",
            format!("`{key}` must be a list of {{\"const\", \"title\"}} objects"),
        );
        return None;
    };
    if !check_choice_count(check, key, values.len(), limits) {
        return None;
    }
    let mut choices = Vec::with_capacity(values.len());
    for (i, entry) in values.iter().enumerate() {
        let Some(value) = entry.get("const").and_then(Value::as_str) else {
            check.fail(
                "choice-without-const",
                format!("`{key}[{i}]` needs a string `const`, the value that goes into the answer"),
            );
            return None;
        };
        let label = match entry.get("title") {
            None => value.to_owned(),
            Some(Value::String(title)) => title.clone(),
            Some(other) => {
                check.fail(
                    "not-a-string",
                    format!("`{key}[{i}].title` must be a string, not {other}"),
                );
                return None;
            }
        };
        choices.push(Choice {
            value: value.to_owned(),
            label,
        });
    }
    unique(check, key, &choices).then_some(choices)
}

pub(super) fn with_enum_names(
    check: &mut PropertyCheck<'_>,
    mut choices: Vec<Choice>,
) -> Option<Vec<Choice>> {
    let Some(names) = check.object.get("enumNames") else {
        return Some(choices);
    };
    let names: Option<Vec<&str>> = names
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect());
    match names {
        Some(names) if names.len() == choices.len() => {
            for (choice, name) in choices.iter_mut().zip(names) {
                choice.label = name.to_owned();
            }
            Some(choices)
        }
        _ => {
            check.fail(
                "enumnames-mismatch",
                format!(
                    "`enumNames` must be {} strings, one for each `enum` value",
                    choices.len()
                ),
            );
            None
        }
    }
}

fn unique(check: &mut PropertyCheck<'_>, key: &str, choices: &[Choice]) -> bool {
    for (i, choice) in choices.iter().enumerate() {
        if choices[..i].iter().any(|c| c.value == choice.value) {
            check.fail(
                "duplicate-choice",
                format!("`{key}` lists \"{}\" twice", choice.value),
            );
            return false;
        }
    }
    true
}
