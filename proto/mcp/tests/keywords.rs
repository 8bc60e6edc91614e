//! Validation keywords the subset does not implement are refused with
//! their rule named, never dropped; and defaults are filled into an
//! accepted answer whoever gave it.

use elicit_mcp::{Answer, Elicitation, ElicitationAction, Limits};
use serde_json::{Value, json};

fn form(property: Value) -> Value {
    json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"a": property}}})
}

fn refused_with(property: Value, keyword: &str) {
    let errors = match Elicitation::from_value(form(property.clone()), &Limits::default()) {
        Ok(_) => panic!("{property} was accepted; `{keyword}` would have been dropped"),
        Err(errors) => errors.0,
    };
    assert!(
        errors
            .iter()
            .any(|e| e.rule == "unsupported-keyword" && e.detail.contains(&format!("`{keyword}`"))),
        "{property}: {errors:?}"
    );
}

#[test]
fn choices_on_a_number_integer_or_anyof_string_are_refused_by_name() {
    refused_with(
        json!({"type": "number", "oneOf": [{"const": 1, "title": "one"}]}),
        "oneOf",
    );
    refused_with(json!({"type": "integer", "enum": [1, 2]}), "enum");
    refused_with(
        json!({"type": "string", "anyOf": [{"const": "a", "title": "A"}, {"const": "b"}]}),
        "anyOf",
    );
    refused_with(json!({"type": "boolean", "enum": [true]}), "enum");
    refused_with(
        json!({"type": "number", "exclusiveMinimum": 0}),
        "exclusiveMinimum",
    );
    refused_with(json!({"type": "integer", "multipleOf": 5}), "multipleOf");
    refused_with(json!({"type": "string", "minimum": 3}), "minimum");
    refused_with(
        json!({"type": "array", "items": {"type": "string", "enum": ["x"]}, "contains": {"const": "x"}}),
        "contains",
    );
}

#[test]
fn honoured_keywords_still_pass() {
    for property in [
        json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}),
        json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
        json!({"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^a", "format": "email"}),
        json!({"type": "integer", "minimum": 1, "maximum": 3}),
        json!({"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1, "maxItems": 2, "uniqueItems": true}),
    ] {
        if let Err(errors) = Elicitation::from_value(form(property.clone()), &Limits::default()) {
            panic!("{property} refused: {errors}");
        }
    }
}

fn request(params: Value) -> Elicitation {
    Elicitation::from_value(params, &Limits::default()).expect("valid request")
}

#[test]
fn an_accept_gets_every_omitted_default_and_keeps_given_values() {
    let request = request(
        json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "Ann"},
            "n": {"type": "integer", "default": 3},
            "ok": {"type": "boolean", "default": true},
            "pick": {"type": "string", "enum": ["a", "b"], "default": "b"},
            "many": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["y"]},
            "free": {"type": "string"}
        }}}),
    );
    let answer = Answer {
        action: ElicitationAction::Accept,
        content: Some(json!({"n": 7})),
    }
    .completed(&request);
    assert_eq!(
        answer.content,
        Some(json!({"name": "Ann", "n": 7, "ok": true, "pick": "b", "many": ["y"]}))
    );
    let bare = Answer::bare(ElicitationAction::Accept).completed(&request);
    assert_eq!(bare.content.as_ref().map(|c| c["n"].clone()), Some(json!(3)));
    let declined = Answer {
        action: ElicitationAction::Decline,
        content: Some(json!({})),
    }
    .completed(&request);
    assert_eq!(declined.content, None);
}

#[test]
fn a_url_accept_carries_no_content() {
    let request =
        request(json!({"mode": "url", "message": "m", "url": "https://example.com/x", "elicitationId": "e"}));
    let answer = Answer {
        action: ElicitationAction::Accept,
        content: Some(json!({})),
    }
    .completed(&request);
    assert_eq!(answer.content, None);
}
