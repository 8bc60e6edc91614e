//! Shared pieces of the fuzz targets: structure-aware generators of
//! `elicitation/create` params and answers, and the invariants every target
//! checks. The generators draw keys, keywords and values mostly from small
//! vocabularies so that the fuzzer reaches deep into the schema check
//! instead of stopping at "not JSON" or "unknown keyword".

use arbitrary::{Result, Unstructured};
use elicit_proto::{
    Answer, Elicitation, ElicitationAction, FieldKind, Form, Limits, Mode, SchemaErrors, validate_answer,
};
use serde_json::{Map, Value, json};

/// Property names: few, so that `required` and answers hit them.
const NAMES: &[&str] = &["a", "b", "name", "email", "count", "tags", ""];

/// Field types of the subset and a few outside it.
const TYPES: &[&str] = &[
    "string", "string", "number", "integer", "boolean", "array", "object", "null", "str",
];

const FORMATS: &[&str] = &["email", "uri", "date", "date-time", "ipv4", ""];

/// Text that fits some format or choice, so that defaults and answers pass
/// often enough for the accepting paths to be explored.
const TEXTS: &[&str] = &[
    "a",
    "b",
    "",
    "Monica",
    "jane@example.com",
    "https://example.com/x",
    "urn:isbn:0451450523",
    "2026-01-31",
    "2024-02-29",
    "2026-01-31T09:30:00+01:00",
    "2026-11-29T10:00:00Z",
    "AB0123456789",
    "é",
    "\u{1F600}",
];

/// Pieces of ECMA-262 patterns; concatenated at random they make valid and
/// broken patterns, nested groups and quantifiers alike.
const PATTERN_ATOMS: &[&str] = &[
    "a", "b", "\\d", "\\w", "\\s", ".", "[a-z]", "[^b]", "(", "(?:", ")", "|", "+", "*", "?", "{2}", "{1,3}",
    "{2,}", "^", "$", "\\b", "\\1", "(?=", "(?!", "\\u00e9", "[\\d-z]", "\\.", "{", "}", "]", "\\",
];

const URLS: &[&str] = &[
    "https://example.com/x",
    "http://localhost:8080/",
    "http://127.0.0.1/",
    "http://[::1]/",
    "http://example.com/",
    "https://user:pw@evil.example/",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "https://",
    "not a url",
];

/// Keywords a property may carry, in and outside the subset.
const KEYWORDS: &[&str] = &[
    "title",
    "description",
    "format",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "enum",
    "enumNames",
    "oneOf",
    "items",
    "minItems",
    "maxItems",
    "default",
    "default",
    "$ref",
    "const",
    "properties",
];

fn pick<'a>(u: &mut Unstructured<'_>, from: &[&'a str]) -> Result<&'a str> {
    u.choose(from).copied()
}

/// A short string: from the vocabulary, a run of one character (long runs
/// are what slow matchers choke on), or arbitrary.
pub fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=5)? {
        0..=2 => pick(u, TEXTS)?.to_owned(),
        3 => {
            let c = *u.choose(&['a', 'b', '1', ' ', '!', 'é'])?;
            let n = u.int_in_range(0..=80)?;
            let mut s: String = std::iter::repeat_n(c, n).collect();
            if u.arbitrary()? {
                s.push_str(pick(u, &["!", "b", "\n", "@x.y"])?);
            }
            s
        }
        _ => {
            let s: String = u.arbitrary()?;
            s.chars().take(32).collect()
        }
    })
}

/// An ECMA-262 pattern source made of [`PATTERN_ATOMS`], or arbitrary text.
pub fn pattern(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 5)? {
        return u.arbitrary();
    }
    let n = u.int_in_range(1..=8)?;
    let mut source = String::new();
    for _ in 0..n {
        source.push_str(pick(u, PATTERN_ATOMS)?);
    }
    Ok(source)
}

/// A number: small whole ones mostly, then fractions, negatives, extremes.
pub fn number(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0..=2 => json!(u.int_in_range(0..=5u8)?),
        3 => json!(f64::from(u.int_in_range(-40..=40i8)?) / 4.0),
        4 => json!(*u.choose(&[-1i64, i64::MIN, i64::MAX, 1 << 53])?),
        _ => json!(*u.choose(&[u64::MAX, 1e300 as u64])?),
    })
}

/// Any JSON value, depth-bounded.
pub fn any_value(u: &mut Unstructured<'_>, depth: u8) -> Result<Value> {
    let top = if depth == 0 { 4 } else { 6 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => number(u)?,
        3 | 4 => Value::String(text(u)?),
        5 => {
            let n = u.int_in_range(0..=3)?;
            Value::Array((0..n).map(|_| any_value(u, depth - 1)).collect::<Result<_>>()?)
        }
        _ => {
            let n = u.int_in_range(0..=3)?;
            let mut map = Map::new();
            for _ in 0..n {
                map.insert(pick(u, NAMES)?.to_owned(), any_value(u, depth - 1)?);
            }
            Value::Object(map)
        }
    })
}

fn strings(u: &mut Unstructured<'_>) -> Result<Value> {
    let n = u.int_in_range(0..=4)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(if u.ratio(1, 8)? {
            any_value(u, 0)?
        } else {
            Value::String(pick(u, &["a", "b", "c", "Monica"])?.to_owned())
        });
    }
    Ok(Value::Array(out))
}

fn titled(u: &mut Unstructured<'_>) -> Result<Value> {
    let n = u.int_in_range(0..=4)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let mut entry = Map::new();
        if !u.ratio(1, 8)? {
            entry.insert("const".into(), json!(pick(u, &["a", "b", "c"])?));
        }
        if u.arbitrary()? {
            entry.insert(
                "title".into(),
                if u.ratio(1, 8)? {
                    any_value(u, 0)?
                } else {
                    json!(text(u)?)
                },
            );
        }
        out.push(Value::Object(entry));
    }
    Ok(Value::Array(out))
}

fn keyword_value(u: &mut Unstructured<'_>, keyword: &str) -> Result<Value> {
    if u.ratio(1, 10)? {
        return any_value(u, 1);
    }
    Ok(match keyword {
        "title" | "description" => json!(text(u)?),
        "format" => json!(pick(u, FORMATS)?),
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minimum" | "maximum" => number(u)?,
        "pattern" => json!(pattern(u)?),
        "enum" | "enumNames" => strings(u)?,
        "oneOf" => titled(u)?,
        "items" => {
            let mut items = Map::new();
            if u.arbitrary()? {
                items.insert("type".into(), json!(pick(u, &["string", "object", "number"])?));
            }
            if u.arbitrary()? {
                items.insert("enum".into(), strings(u)?);
            } else {
                items.insert("anyOf".into(), titled(u)?);
            }
            Value::Object(items)
        }
        "default" => match u.int_in_range(0..=3)? {
            0 => json!(text(u)?),
            1 => number(u)?,
            2 => strings(u)?,
            _ => Value::Bool(u.arbitrary()?),
        },
        _ => any_value(u, 1)?,
    })
}

/// One property schema.
pub fn property(u: &mut Unstructured<'_>) -> Result<Value> {
    if u.ratio(1, 20)? {
        return any_value(u, 1);
    }
    let mut object = Map::new();
    match u.int_in_range(0..=20)? {
        0 => {}
        1 => {
            object.insert("type".into(), json!(["string", "null"]));
        }
        _ => {
            object.insert("type".into(), json!(pick(u, TYPES)?));
        }
    }
    let n = u.int_in_range(0..=4)?;
    for _ in 0..n {
        let keyword = pick(u, KEYWORDS)?;
        let value = keyword_value(u, keyword)?;
        object.insert(keyword.to_owned(), value);
    }
    Ok(Value::Object(object))
}

/// `requestedSchema`.
pub fn schema(u: &mut Unstructured<'_>) -> Result<Value> {
    if u.ratio(1, 20)? {
        return any_value(u, 2);
    }
    let mut schema = Map::new();
    if !u.ratio(1, 20)? {
        let t = if u.ratio(1, 20)? { "array" } else { "object" };
        schema.insert("type".into(), json!(t));
    }
    let n = u.int_in_range(0..=5)?;
    let mut properties = Map::new();
    for _ in 0..n {
        let name = if u.ratio(1, 10)? {
            text(u)?
        } else {
            pick(u, NAMES)?.to_owned()
        };
        properties.insert(name, property(u)?);
    }
    if !u.ratio(1, 20)? {
        schema.insert("properties".into(), Value::Object(properties));
    }
    if u.arbitrary()? {
        let k = u.int_in_range(0..=3)?;
        let mut required = Vec::new();
        for _ in 0..k {
            required.push(if u.ratio(1, 10)? {
                any_value(u, 0)?
            } else {
                json!(pick(u, NAMES)?)
            });
        }
        schema.insert("required".into(), Value::Array(required));
    }
    Ok(Value::Object(schema))
}

/// Whole `elicitation/create` params, form or URL mode.
pub fn params(u: &mut Unstructured<'_>) -> Result<Value> {
    let mut params = Map::new();
    if !u.ratio(1, 20)? {
        let message = if u.ratio(1, 20)? {
            any_value(u, 0)?
        } else {
            json!(text(u)?)
        };
        params.insert("message".into(), message);
    }
    match u.int_in_range(0..=9)? {
        0..=6 => {
            if u.ratio(1, 4)? {
                params.insert("mode".into(), json!("form"));
            }
            params.insert("requestedSchema".into(), schema(u)?);
        }
        7 | 8 => {
            params.insert("mode".into(), json!("url"));
            let url = if u.ratio(1, 5)? {
                any_value(u, 0)?
            } else {
                json!(pick(u, URLS)?)
            };
            params.insert("url".into(), url);
            if u.arbitrary()? {
                params.insert("elicitationId".into(), json!(text(u)?));
            }
        }
        _ => {
            params.insert("mode".into(), any_value(u, 0)?);
        }
    }
    Ok(Value::Object(params))
}

/// The default limits mostly; sometimes tiny ones, so that every limit's
/// refusal is reached too.
pub fn limits(u: &mut Unstructured<'_>) -> Result<Limits> {
    Ok(if u.ratio(1, 8)? {
        Limits {
            max_request_bytes: 200,
            max_message_bytes: 8,
            max_properties: 2,
            max_choices: 2,
            max_url_bytes: 20,
            max_pattern_bytes: 4,
            max_answer_bytes: 32,
        }
    } else {
        Limits::default()
    })
}

/// A value for `field` that often fits it: its default, one of its
/// choices, a number within its bounds, or anything at all.
pub fn value_for(u: &mut Unstructured<'_>, kind: &FieldKind, default: Option<&Value>) -> Result<Value> {
    if let Some(default) = default
        && u.ratio(1, 4)?
    {
        return Ok(default.clone());
    }
    if u.ratio(1, 6)? {
        return any_value(u, 1);
    }
    Ok(match kind {
        FieldKind::Text { .. } => json!(text(u)?),
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let lo = minimum.unwrap_or(-10.0);
            let hi = maximum.unwrap_or(lo + 20.0).max(lo);
            let n = lo + (hi - lo) * f64::from(u.int_in_range(0..=8u8)?) / 8.0;
            if *integer {
                json!(n.round() as i64)
            } else {
                json!(n)
            }
        }
        FieldKind::Boolean => json!(u.arbitrary::<bool>()?),
        FieldKind::Choice { choices } => json!(u.choose(choices)?.value),
        FieldKind::MultiChoice { choices, .. } => {
            let n = u.int_in_range(0..=choices.len() + 1)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(json!(u.choose(choices)?.value));
            }
            Value::Array(items)
        }
    })
}

/// An answer to `form`: an action and content built field by field, with
/// now and then a field left out or one that was never asked for.
pub fn answer_for(u: &mut Unstructured<'_>, form: Option<&Form>) -> Result<Answer> {
    let action = match u.int_in_range(0..=7)? {
        0 => ElicitationAction::Decline,
        1 => ElicitationAction::Cancel,
        _ => ElicitationAction::Accept,
    };
    let content = match u.int_in_range(0..=9)? {
        0 => None,
        1 => Some(any_value(u, 2)?),
        _ => {
            let mut content = Map::new();
            for field in form.map(|f| f.fields.as_slice()).unwrap_or_default() {
                if !u.ratio(1, 6)? {
                    content.insert(
                        field.name.clone(),
                        value_for(u, &field.kind, field.default.as_ref())?,
                    );
                }
            }
            if u.ratio(1, 10)? {
                content.insert(text(u)?, any_value(u, 0)?);
            }
            Some(Value::Object(content))
        }
    };
    Ok(Answer { action, content })
}

/// The invariants of a refusal: at least one error, each with a location,
/// a kebab-case rule name and a sentence.
pub fn check_refusal(errors: &SchemaErrors) {
    assert!(!errors.0.is_empty(), "a refusal without a reason");
    for error in &errors.0 {
        assert!(!error.location.to_string().is_empty(), "no location: {error:?}");
        assert!(
            !error.rule.is_empty()
                && error
                    .rule
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "rule is not a kebab-case name: {error:?}"
        );
        assert!(!error.detail.trim().is_empty(), "no detail: {error:?}");
        assert!(!errors.to_string().is_empty());
    }
}

/// The invariants of an accepted request: the form is well formed, its
/// own defaults are valid answers (apart from required fields without a
/// default), decline and cancel always validate, and the kept `raw` params
/// pass the check again.
pub fn check_accepted(elicitation: &Elicitation, limits: &Limits) {
    assert!(elicitation.message.len() <= limits.max_message_bytes);
    match &elicitation.mode {
        Mode::Url { url, .. } => {
            let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
                || url.host_str().is_some_and(|h| h.starts_with("127."));
            assert!(
                url.scheme() == "https" || (url.scheme() == "http" && loopback),
                "unsafe URL accepted: {url}"
            );
            assert!(
                url.username().is_empty() && url.password().is_none(),
                "credentials: {url}"
            );
            assert!(url.host().is_some());
        }
        Mode::Form(form) => check_form(form, limits),
    }
    for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        assert_eq!(
            validate_answer(elicitation, &Answer::bare(action), limits),
            Ok(())
        );
    }
    if let Some(form) = elicitation.form() {
        let defaults = Answer {
            action: ElicitationAction::Accept,
            content: Some(Value::Object(form.defaults())),
        };
        if let Err(errors) = validate_answer(elicitation, &defaults, limits) {
            for error in errors {
                let field = form.field(&error.field);
                assert!(
                    field.is_some_and(|f| f.required && f.default.is_none())
                        && error.message == "is required",
                    "the form's own defaults fail: {error:?} in {form:?}"
                );
            }
        }
    }
    // Checking is a pure function of the params: the kept params pass again.
    let again = Elicitation::from_value(elicitation.raw.clone(), limits);
    assert!(again.is_ok(), "raw params no longer pass: {again:?}");
}

fn check_form(form: &Form, limits: &Limits) {
    assert!(form.fields.len() <= limits.max_properties);
    serde_json::to_string(form).expect("a form serialises");
    for (i, field) in form.fields.iter().enumerate() {
        assert!(!field.name.is_empty());
        assert!(
            !form.fields[..i].iter().any(|f| f.name == field.name),
            "duplicate field"
        );
        match &field.kind {
            FieldKind::Text {
                min_length,
                max_length,
                ..
            } => {
                if let (Some(lo), Some(hi)) = (min_length, max_length) {
                    assert!(lo <= hi);
                }
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                if let (Some(lo), Some(hi)) = (minimum, maximum) {
                    assert!(lo <= hi);
                }
                if *integer {
                    assert!(minimum.is_none_or(|m| m.fract() == 0.0));
                    assert!(maximum.is_none_or(|m| m.fract() == 0.0));
                }
            }
            FieldKind::Boolean => {}
            FieldKind::Choice { choices } | FieldKind::MultiChoice { choices, .. } => {
                assert!(!choices.is_empty() && choices.len() <= limits.max_choices);
                for (j, choice) in choices.iter().enumerate() {
                    assert!(
                        !choices[..j].iter().any(|c| c.value == choice.value),
                        "duplicate choice"
                    );
                }
                if let FieldKind::MultiChoice {
                    min_items, max_items, ..
                } = &field.kind
                {
                    if let (Some(lo), Some(hi)) = (min_items, max_items) {
                        assert!(lo <= hi);
                    }
                    assert!(min_items.is_none_or(|m| m <= choices.len() as u64));
                }
            }
        }
    }
}

/// An independent reading of "this accepted content fits the form": every
/// required field present, nothing unasked, each value of its field's type
/// and within its bounds and choices. (Formats and patterns are left to
/// their own crates; the schema check's tests cover them.)
pub fn check_accepted_content(form: &Form, content: Option<&Value>) {
    let empty = Map::new();
    let values = match content {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(values)) => values,
        Some(other) => panic!("non-object content accepted: {other}"),
    };
    for key in values.keys() {
        assert!(form.field(key).is_some(), "unasked key {key:?} accepted");
    }
    for field in &form.fields {
        let Some(value) = values.get(&field.name) else {
            assert!(!field.required, "required {:?} missing but accepted", field.name);
            continue;
        };
        match &field.kind {
            FieldKind::Text {
                min_length,
                max_length,
                ..
            } => {
                let text = value.as_str().expect("text accepted as non-string");
                let n = text.chars().count() as u64;
                assert!(min_length.is_none_or(|m| n >= m) && max_length.is_none_or(|m| n <= m));
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let n = value.as_f64().expect("number accepted as non-number");
                assert!(!integer || n.fract() == 0.0, "fraction accepted for an integer");
                assert!(minimum.is_none_or(|m| n >= m) && maximum.is_none_or(|m| n <= m));
            }
            FieldKind::Boolean => assert!(value.is_boolean()),
            FieldKind::Choice { choices } => {
                let v = value.as_str().expect("choice accepted as non-string");
                assert!(choices.iter().any(|c| c.value == v), "unknown choice accepted");
            }
            FieldKind::MultiChoice {
                choices,
                min_items,
                max_items,
            } => {
                let items = value.as_array().expect("multi-choice accepted as non-list");
                for (i, item) in items.iter().enumerate() {
                    let v = item.as_str().expect("non-string item accepted");
                    assert!(choices.iter().any(|c| c.value == v), "unknown item accepted");
                    assert!(!items[..i].contains(item), "duplicate item accepted");
                }
                let n = items.len() as u64;
                assert!(min_items.is_none_or(|m| n >= m) && max_items.is_none_or(|m| n <= m));
            }
        }
    }
}
