//! The MCP schema-subset check: `requestedSchema` in, a [`Form`] out.
//!
//! Every era's forms pass through here (2025-06-18, 2025-11-25 and
//! 2026-07-28 share one subset; `default` and multi-select from 2025-11-25 are
//! accepted everywhere). All problems are collected, not just the first, so
//! that `elicit check` can show a server author the whole list at once.

use serde_json::{Map, Value};

use crate::answer::check_value;
use crate::error::{Location, SchemaError};
use crate::form::{Field, FieldKind, Form, Pattern, TextFormat};
use crate::limits::Limits;
use crate::pattern::PatternError;

mod choices;
mod keywords;

use choices::{parse_enum, parse_multi_choice, parse_titled, with_enum_names};
use keywords::refuse_unhonoured;

/// Keywords that change what a property means in ways the subset cannot
/// render; silently ignoring them would let an answer through that the
/// server did not expect.
const STRUCTURAL_KEYWORDS: &[&str] = &[
    "$ref",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "properties",
    "patternProperties",
    "additionalProperties",
    "prefixItems",
    "const",
];

/// What a check does with a `pattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patterns {
    /// Compiles it (refusing what does not compile) and matches `default`.
    Compile,
    /// Takes it as checked before: a request read back from the store or
    /// from the broker, whose patterns compiled when it first came in.
    Trust,
}

/// Checks `schema` (the value of `requestedSchema`) and builds its form.
pub(crate) fn parse_schema(
    schema: &Value,
    limits: &Limits,
    patterns: Patterns,
    errors: &mut Vec<SchemaError>,
) -> Option<Form> {
    let at_schema = |rule, detail: String| SchemaError::new(Location::Schema, rule, detail);
    let Some(schema) = schema.as_object() else {
        errors.push(at_schema(
            "schema-not-object",
            format!("must be a JSON object, not {}", kind_of(schema)),
        ));
        return None;
    };
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            errors.push(at_schema(
                "top-not-object",
                format!("`type` must be \"object\", not {other}"),
            ));
            return None;
        }
        None => {
            errors.push(at_schema("top-not-object", "`type` must be \"object\"".into()));
            return None;
        }
    }
    let properties = match schema.get("properties") {
        Some(Value::Object(properties)) => properties,
        Some(other) => {
            errors.push(at_schema(
                "properties-not-object",
                format!("`properties` must be an object, not {}", kind_of(other)),
            ));
            return None;
        }
        // A bare `{"type": "object"}` is a confirmation with no fields.
        None => &Map::new(),
    };
    if properties.len() > limits.max_properties {
        errors.push(at_schema(
            "too-many-properties",
            format!(
                "has {} properties, more than the limit of {}",
                properties.len(),
                limits.max_properties
            ),
        ));
        return None;
    }
    let required = parse_required(schema.get("required"), properties, errors);

    let before = errors.len();
    let fields: Vec<Field> = properties
        .iter()
        .filter_map(|(name, property)| {
            let is_required = required.iter().any(|r| r == name);
            parse_field(name, property, is_required, (limits, patterns), errors)
        })
        .collect();
    (errors.len() == before).then_some(Form { fields })
}

fn parse_required(
    required: Option<&Value>,
    properties: &Map<String, Value>,
    errors: &mut Vec<SchemaError>,
) -> Vec<String> {
    let Some(required) = required else {
        return Vec::new();
    };
    let Some(names) = required.as_array() else {
        errors.push(SchemaError::new(
            Location::Schema,
            "required-not-list",
            "`required` must be a list of property names",
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in names {
        match name.as_str() {
            Some(name) if properties.contains_key(name) => out.push(name.to_owned()),
            Some(name) => errors.push(SchemaError::new(
                Location::Property(name.to_owned()),
                "required-unknown",
                "is listed in `required` but is not one of the properties, so it could never be filled",
            )),
            None => errors.push(SchemaError::new(
                Location::Schema,
                "required-not-list",
                format!("`required` must hold property names, not {name}"),
            )),
        }
    }
    out
}

/// Collects the errors of one property while it is being read.
struct PropertyCheck<'a> {
    name: &'a str,
    object: &'a Map<String, Value>,
    errors: &'a mut Vec<SchemaError>,
    failed: bool,
}

impl PropertyCheck<'_> {
    fn fail(&mut self, rule: &'static str, detail: impl Into<String>) {
        self.failed = true;
        self.errors.push(SchemaError::new(
            Location::Property(self.name.to_owned()),
            rule,
            detail,
        ));
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.object.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                let detail = format!("`{key}` must be a string, not {}", kind_of(other));
                self.fail("not-a-string", detail);
                None
            }
        }
    }

    fn count(&mut self, key: &str) -> Option<u64> {
        let value = self.object.get(key)?;
        match whole_number(value) {
            Some(n) if n >= 0.0 && n <= u64::MAX as f64 => Some(n as u64),
            _ => {
                self.fail(
                    "bad-count",
                    format!("`{key}` must be a whole number of zero or more, not {value}"),
                );
                None
            }
        }
    }

    fn bound(&mut self, key: &str, integer: bool) -> Option<f64> {
        let value = self.object.get(key)?;
        match (value.as_f64(), integer) {
            (Some(n), true) if n.fract() != 0.0 => {
                self.fail(
                    "integer-fraction-bound",
                    format!("`{key}` of an integer field must be a whole number, not {value}"),
                );
                None
            }
            (Some(n), _) => Some(n),
            (None, _) => {
                self.fail("bad-bound", format!("`{key}` must be a number, not {value}"));
                None
            }
        }
    }

    fn min_max<T: PartialOrd + std::fmt::Display>(
        &mut self,
        (min_key, min): (&str, Option<T>),
        (max_key, max): (&str, Option<T>),
    ) {
        if let (Some(min), Some(max)) = (&min, &max)
            && min > max
        {
            self.fail(
                "contradictory-bounds",
                format!("`{min_key}` {min} is greater than `{max_key}` {max}: no answer could satisfy both"),
            );
        }
    }
}

fn parse_field(
    name: &str,
    property: &Value,
    required: bool,
    (limits, patterns): (&Limits, Patterns),
    errors: &mut Vec<SchemaError>,
) -> Option<Field> {
    let Some(object) = property.as_object() else {
        errors.push(SchemaError::new(
            Location::Property(name.to_owned()),
            "property-not-object",
            format!("must be a JSON object, not {}", kind_of(property)),
        ));
        return None;
    };
    let mut check = PropertyCheck {
        name,
        object,
        errors,
        failed: false,
    };
    if name.is_empty() {
        check.fail("empty-name", "a property name must not be empty");
    }
    let title = check.string("title");
    let help = check.string("description");
    let kind = parse_kind(&mut check, limits, patterns);
    for keyword in STRUCTURAL_KEYWORDS {
        if object.contains_key(*keyword) && !(*keyword == "properties" && check.failed) {
            check.fail(
                "unsupported-keyword",
                format!("`{keyword}` is outside the MCP elicitation subset"),
            );
        }
    }
    let kind = kind?;
    let default = object.get("default").cloned();
    let mut field = Field {
        name: name.to_owned(),
        label: title.unwrap_or_else(|| name.to_owned()),
        help,
        required,
        default: None,
        kind,
    };
    if let Some(default) = default {
        let checked = match patterns {
            Patterns::Compile => check_value(&field, &default),
            // It matched when the request first came in.
            Patterns::Trust => Ok(()),
        };
        match checked {
            Ok(()) => field.default = Some(default),
            Err(why) => check.fail("default-does-not-fit", format!("`default` {default} {why}")),
        }
    }
    (!check.failed).then_some(field)
}

fn parse_kind(check: &mut PropertyCheck<'_>, limits: &Limits, patterns: Patterns) -> Option<FieldKind> {
    let type_name = match check.object.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(_)) => {
            check.fail(
                "type-list",
                "`type` must be one type name; type lists are not allowed",
            );
            return None;
        }
        Some(other) => {
            check.fail("bad-type", format!("`type` must be a type name, not {other}"));
            return None;
        }
        None => {
            check.fail("missing-type", "needs a `type`");
            return None;
        }
    };
    if matches!(
        type_name.as_str(),
        "string" | "number" | "integer" | "boolean" | "array"
    ) {
        refuse_unhonoured(check, &type_name);
        if check.failed {
            return None;
        }
    }
    match type_name.as_str() {
        "string" => parse_string_kind(check, limits, patterns),
        "number" | "integer" => {
            let integer = type_name == "integer";
            let minimum = check.bound("minimum", integer);
            let maximum = check.bound("maximum", integer);
            check.min_max(("minimum", minimum), ("maximum", maximum));
            Some(FieldKind::Number {
                integer,
                minimum,
                maximum,
            })
        }
        "boolean" => Some(FieldKind::Boolean),
        "array" => parse_multi_choice(check, limits),
        "object" => {
            check.fail(
                "nested-object",
                "nested objects are not allowed; a form is one flat object",
            );
            None
        }
        "null" => {
            check.fail(
                "null-type",
                "`null` is not a field type; use string, number, integer, boolean or a multi-select array",
            );
            None
        }
        other => {
            check.fail("unknown-type", format!("`{other}` is not a field type"));
            None
        }
    }
}

fn parse_string_kind(
    check: &mut PropertyCheck<'_>,
    limits: &Limits,
    patterns: Patterns,
) -> Option<FieldKind> {
    let has_enum = check.object.contains_key("enum");
    let has_one_of = check.object.contains_key("oneOf");
    if has_enum && has_one_of {
        check.fail("enum-and-oneof", "has both `enum` and `oneOf`; use one");
        return None;
    }
    if has_enum {
        let choices = parse_enum(check, check.object.get("enum"), "enum", limits)?;
        return with_enum_names(check, choices).map(|choices| FieldKind::Choice { choices });
    }
    if has_one_of {
        let choices = parse_titled(check, check.object.get("oneOf"), "oneOf", limits)?;
        return Some(FieldKind::Choice { choices });
    }
    if check.object.contains_key("enumNames") {
        check.fail("enumnames-without-enum", "`enumNames` needs an `enum` beside it");
    }
    let format = match check.string("format") {
        Some(name) => match TextFormat::parse(&name) {
            Some(format) => Some(format),
            None => {
                check.fail(
                    "unknown-format",
                    format!("format `{name}` is not one of email, uri, date, date-time"),
                );
                return None;
            }
        },
        None => None,
    };
    let min_length = check.count("minLength");
    let max_length = check.count("maxLength");
    check.min_max(("minLength", min_length), ("maxLength", max_length));
    let pattern = match check.string("pattern") {
        Some(source) if source.len() > limits.max_pattern_bytes => {
            check.fail(
                "pattern-too-long",
                format!(
                    "`pattern` is {} bytes, more than the limit of {}",
                    source.len(),
                    limits.max_pattern_bytes
                ),
            );
            None
        }
        Some(source) if patterns == Patterns::Trust => Some(Pattern::checked(source)),
        Some(source) => match Pattern::compile(&source) {
            Ok(pattern) => Some(pattern),
            Err(PatternError::Syntax(e)) => {
                check.fail(
                    "bad-pattern",
                    format!("`pattern` does not compile as ECMA-262: {e}"),
                );
                None
            }
            Err(PatternError::Unsupported(why)) => {
                check.fail("unsupported-pattern", format!("`pattern` {why}"));
                None
            }
        },
        None => None,
    };
    Some(FieldKind::Text {
        format,
        min_length,
        max_length,
        pattern,
    })
}

/// A JSON number with no fractional part, as JSON Schema counts integers
/// (`1.0` is one).
pub(crate) fn whole_number(value: &Value) -> Option<f64> {
    value.as_f64().filter(|n| n.fract() == 0.0)
}

/// A short English name of a JSON value's type, for error messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
