//! One test per rule of the schema-subset check and of content validation.

use elicit_mcp::{Answer, Elicitation, ElicitationAction, FieldKind, Limits, Location};
use serde_json::{Value, json};

fn form(properties: Value) -> Value {
    json!({"message": "m", "requestedSchema": {"type": "object", "properties": properties}})
}

/// The rules broken by `params`, with where each was broken.
fn broken(params: Value) -> Vec<(String, &'static str)> {
    match Elicitation::from_value(params, &Limits::default()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .0
            .into_iter()
            .map(|e| (e.location.to_string(), e.rule))
            .collect(),
    }
}

fn assert_rule(params: Value, location: &str, rule: &str) {
    let found = broken(params);
    assert!(
        found.iter().any(|(l, r)| l == location && *r == rule),
        "expected {location} [{rule}], found {found:?}"
    );
}

#[test]
fn nesting_and_arrays() {
    assert_rule(
        form(json!({"a": {"type": "object", "properties": {}}})),
        "property `a`",
        "nested-object",
    );
    assert_rule(
        form(json!({"a": {"type": "array", "items": {"type": "object"}}})),
        "property `a`",
        "array-of-objects",
    );
    assert_rule(
        form(json!({"a": {"type": "array", "items": {"type": "string"}}})),
        "property `a`",
        "free-array",
    );
    assert_rule(
        form(json!({"a": {"type": "array"}})),
        "property `a`",
        "free-array",
    );
    assert_rule(
        form(json!({"a": {"type": ["string", "null"]}})),
        "property `a`",
        "type-list",
    );
    assert_rule(form(json!({"a": {"type": "null"}})), "property `a`", "null-type");
    assert_rule(form(json!({"a": {}})), "property `a`", "missing-type");
    assert_rule(
        form(json!({"a": {"type": "string", "$ref": "#/x"}})),
        "property `a`",
        "unsupported-keyword",
    );
}

#[test]
fn formats_and_bounds() {
    assert_rule(
        form(json!({"a": {"type": "string", "format": "ipv4"}})),
        "property `a`",
        "unknown-format",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "minLength": 3, "maxLength": 1}})),
        "property `a`",
        "contradictory-bounds",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "minLength": -1}})),
        "property `a`",
        "bad-count",
    );
    assert_rule(
        form(json!({"a": {"type": "integer", "maximum": 2.5}})),
        "property `a`",
        "integer-fraction-bound",
    );
    assert_rule(
        form(json!({"a": {"type": "number", "minimum": 2, "maximum": 1}})),
        "property `a`",
        "contradictory-bounds",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "pattern": "(("}})),
        "property `a`",
        "bad-pattern",
    );
    // Backreferences and lookaround have no linear-time match (below).
    assert_rule(
        form(json!({"a": {"type": "string", "pattern": "(a)\\1"}})),
        "property `a`",
        "unsupported-pattern",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "pattern": "^(?=.*\\d)"}})),
        "property `a`",
        "unsupported-pattern",
    );
    // An integer bound written 2.0 is still a whole number.
    assert!(broken(form(json!({"a": {"type": "integer", "minimum": 2.0}}))).is_empty());
}

#[test]
fn choices() {
    assert_rule(
        form(json!({"a": {"type": "string", "enum": []}})),
        "property `a`",
        "empty-enum",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "enum": ["x", "x"]}})),
        "property `a`",
        "duplicate-choice",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "enum": ["x", "y"], "enumNames": ["X"]}})),
        "property `a`",
        "enumnames-mismatch",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "oneOf": [{"title": "X"}]}})),
        "property `a`",
        "choice-without-const",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "enum": ["x"], "oneOf": [{"const": "x"}]}})),
        "property `a`",
        "enum-and-oneof",
    );
    assert_rule(
        form(json!({"a": {"type": "array", "minItems": 3, "items": {"enum": ["x", "y"]}}})),
        "property `a`",
        "contradictory-bounds",
    );
    let many: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    assert_rule(
        form(json!({"a": {"type": "string", "enum": many}})),
        "property `a`",
        "too-many-choices",
    );
}

#[test]
fn defaults_and_required() {
    assert_rule(
        form(json!({"a": {"type": "string", "enum": ["x"], "default": "y"}})),
        "property `a`",
        "default-does-not-fit",
    );
    assert_rule(
        form(json!({"a": {"type": "boolean", "default": "yes"}})),
        "property `a`",
        "default-does-not-fit",
    );
    assert_rule(
        form(json!({"a": {"type": "string", "format": "date", "default": "tomorrow"}})),
        "property `a`",
        "default-does-not-fit",
    );
    assert_rule(
        form(
            json!({"a": {"type": "array", "maxItems": 1, "items": {"enum": ["x", "y"]}, "default": ["x", "y"]}}),
        ),
        "property `a`",
        "default-does-not-fit",
    );
    let mut params = form(json!({"a": {"type": "string"}}));
    params["requestedSchema"]["required"] = json!(["a", "ghost"]);
    assert_rule(params, "property `ghost`", "required-unknown");
}

#[test]
fn top_level() {
    assert_rule(
        json!({"requestedSchema": {"type": "object"}}),
        "message",
        "missing",
    );
    assert_rule(
        json!({"message": 3, "requestedSchema": {"type": "object"}}),
        "message",
        "not-a-string",
    );
    assert_rule(json!({"message": "m", "mode": "audio"}), "mode", "unknown-mode");
    assert_rule(json!({"message": "m"}), "requestedSchema", "missing");
    assert_rule(
        json!({"message": "m", "requestedSchema": {"type": "array"}}),
        "requestedSchema",
        "top-not-object",
    );
    assert_rule(json!([1]), "params", "params-not-object");
}

#[test]
fn urls() {
    let url = |u: &str| json!({"mode": "url", "message": "m", "url": u, "elicitationId": "e"});
    assert!(broken(url("https://example.com/x")).is_empty());
    assert!(broken(url("http://127.0.0.1:99/cb")).is_empty());
    assert!(broken(url("http://[::1]/cb")).is_empty());
    assert_rule(url("http://example.com/"), "url", "url-scheme");
    assert_rule(url("javascript:alert(1)"), "url", "url-scheme");
    assert_rule(url("file:///etc/passwd"), "url", "url-scheme");
    assert_rule(
        url("https://bank.example@evil.example/"),
        "url",
        "url-credentials",
    );
    assert_rule(url("::"), "url", "bad-url");
}

#[test]
fn limits() {
    let limits = Limits {
        max_properties: 2,
        max_message_bytes: 4,
        ..Limits::default()
    };
    let errors = Elicitation::from_value(
        json!({"message": "too long", "requestedSchema": {"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}}}}),
        &limits,
    )
    .expect_err("over both limits");
    let rules: Vec<&str> = errors.0.iter().map(|e| e.rule).collect();
    assert_eq!(rules, ["message-too-long", "too-many-properties"]);
    let big = format!("{{\"message\": \"{}\"}}", "x".repeat(300_000));
    let errors = Elicitation::parse_str(&big, &Limits::default()).expect_err("too large");
    assert_eq!(errors.0[0].rule, "request-too-large");
    assert_eq!(errors.0[0].location, Location::Params);
}

#[test]
fn form_description() {
    let request = Elicitation::from_value(
        json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "z": {"type": "string", "title": "Zed", "description": "last letter"},
            "p": {"type": "string", "enum": ["u", "n"], "enumNames": ["Urgent", "Normal"], "default": "n"},
            "m": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "Apple"}]}}
        }, "required": ["z"]}}),
        &Limits::default(),
    )
    .expect("valid");
    let form = request.form().expect("form mode");
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["z", "p", "m"], "server order is kept");
    assert_eq!(form.fields[0].label, "Zed");
    assert_eq!(form.fields[0].help.as_deref(), Some("last letter"));
    assert!(form.fields[0].required && !form.fields[1].required);
    let FieldKind::Choice { choices } = &form.fields[1].kind else {
        panic!("p is a single choice")
    };
    assert_eq!(choices[0].label, "Urgent");
    assert_eq!(form.defaults().get("p"), Some(&json!("n")));
    assert_eq!(form.fields[2].kind.name(), "multi-choice");
}

fn answer(action: ElicitationAction, content: Value) -> Answer {
    Answer {
        action,
        content: Some(content),
    }
}

#[test]
fn content_errors_name_their_field() {
    let request = Elicitation::from_value(
        form(json!({
            "n": {"type": "integer", "minimum": 1},
            "s": {"type": "string", "pattern": "^a+$"},
            "m": {"type": "array", "items": {"enum": ["x", "y"]}},
        })),
        &Limits::default(),
    )
    .expect("valid");
    let limits = Limits::default();
    let errors = validate_answer_fields(
        &request,
        json!({"n": 0, "s": "b", "m": ["x", "x"], "q": 1}),
        &limits,
    );
    assert_eq!(
        errors,
        [
            ("q".to_owned(), "was not asked for".to_owned()),
            ("n".to_owned(), "must be at least 1".to_owned()),
            ("s".to_owned(), "must match the pattern ^a+$".to_owned()),
            ("m".to_owned(), "lists \"x\" twice".to_owned()),
        ]
    );
    // ECMA-262 semantics: `\d` and unanchored search.
    let digits = Elicitation::from_value(
        form(json!({"s": {"type": "string", "pattern": "\\d{3}"}})),
        &limits,
    )
    .expect("valid");
    assert!(validate_answer_fields(&digits, json!({"s": "ab123cd"}), &limits).is_empty());
    let too_big = answer(ElicitationAction::Accept, json!({"s": "x".repeat(300_000)}));
    assert!(elicit_mcp::validate_answer(&digits, &too_big, &limits).is_err());
}

fn validate_answer_fields(request: &Elicitation, content: Value, limits: &Limits) -> Vec<(String, String)> {
    match elicit_mcp::validate_answer(request, &answer(ElicitationAction::Accept, content), limits) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| (e.field, e.message)).collect(),
    }
}

/// Found while writing the schema_check fuzz target: a pattern with nested
/// quantifiers and a default that almost fits made the backtracking
/// matcher take about 2^n steps, so one request could stall the broker.
/// Patterns are now matched in linear time.
#[test]
fn nested_quantifiers_cannot_stall_the_check() {
    let start = std::time::Instant::now();
    let almost = format!("{}!", "a".repeat(40));
    let found = broken(form(json!({
        "s": {"type": "string", "pattern": "^(a+)+$", "default": almost},
    })));
    assert_eq!(found, [("property `s`".to_owned(), "default-does-not-fit")]);
    let request = Elicitation::from_value(
        form(json!({"s": {"type": "string", "pattern": "^(a|aa)*$"}})),
        &Limits::default(),
    )
    .expect("valid");
    let long = format!("{}!", "a".repeat(100_000));
    let errors = validate_answer_fields(&request, json!({ "s": long }), &Limits::default());
    assert_eq!(errors.len(), 1);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}
