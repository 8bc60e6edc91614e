//! Validation keywords a field's kind does not honour are refused by
//! name, never dropped: a dropped keyword shows a free field and lets
//! through answers the server ruled out.

use super::PropertyCheck;

/// Validation keywords of JSON Schema (2020-12 and the drafts servers still
/// write) that constrain a string, number or array value (object keywords
/// cannot apply: a field is never an object). A property may carry only those its kind
/// honours (see [`honoured_by`]); any other is refused with its name, since
/// dropping it would show a free field and let through answers the server
/// ruled out (`{"type": "integer", "enum": [1, 2]}` answered with 5).
const VALIDATION_KEYWORDS: &[&str] = &[
    "enum",
    "oneOf",
    "anyOf",
    "enumNames",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "additionalItems",
    "unevaluatedItems",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The validation keywords a field of JSON type `type_name` honours: shown
/// to the user and checked in every answer.
fn honoured_by(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "string" => &[
            "enum",
            "oneOf",
            "enumNames",
            "minLength",
            "maxLength",
            "pattern",
            "format",
        ],
        "number" | "integer" => &["minimum", "maximum"],
        // Duplicates are refused in every answer, so `uniqueItems` holds.
        "array" => &["items", "minItems", "maxItems", "uniqueItems"],
        _ => &[],
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Refuses every validation keyword that a field of `type_name` would
/// otherwise drop without a word.
pub(super) fn refuse_unhonoured(check: &mut PropertyCheck<'_>, type_name: &str) {
    let honoured = honoured_by(type_name);
    for keyword in VALIDATION_KEYWORDS {
        if check.object.contains_key(*keyword) && !honoured.contains(keyword) {
            let also = if honoured.is_empty() {
                String::new()
            } else {
                format!(" (it honours {})", honoured.join(", "))
            };
            let hint = if matches!(*keyword, "enum" | "oneOf" | "anyOf") {
                "; choices must be strings: `{\"type\": \"string\", \"enum\": […]}` or `oneOf` of `{\"const\", \"title\"}`"
            } else {
                ""
            };
            check.fail(
                "unsupported-keyword",
                format!(
                    "`{keyword}` is not honoured on {} {type_name} field{also}{hint}",
                    article(type_name)
                ),
            );
        }
    }
}
