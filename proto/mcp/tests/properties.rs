//! Property tests: the checker never panics, and a valid form's defaults
//! are always a valid answer.

use elicit_mcp::{Answer, Elicitation, ElicitationAction, Limits, validate_answer};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        prop_oneof![
            "[a-z]{0,6}",
            Just("object".to_owned()),
            Just("string".to_owned()),
            Just("array".to_owned()),
            Just("enum".to_owned()),
            Just("url".to_owned()),
            Just("([a-".to_owned()),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            "[a-z]{1,4}",
            Just("type".to_owned()),
            Just("properties".to_owned()),
            Just("requestedSchema".to_owned()),
            Just("message".to_owned()),
            Just("items".to_owned()),
            Just("enum".to_owned()),
            Just("oneOf".to_owned()),
            Just("default".to_owned()),
            Just("mode".to_owned()),
            Just("pattern".to_owned()),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// A property of any allowed kind, with a default that fits it.
fn property_with_default() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u64..5, 5u64..20).prop_map(|(min, max)| json!({
            "type": "string", "minLength": min, "maxLength": max, "default": "x".repeat(min as usize)
        })),
        Just(json!({"type": "string", "format": "email", "default": "a@example.com"})),
        Just(json!({"type": "string", "format": "date", "default": "2024-02-29"})),
        Just(json!({"type": "string", "format": "date-time", "default": "2024-02-29T00:00:00Z"})),
        Just(json!({"type": "string", "format": "uri", "default": "https://example.com"})),
        (-1000i64..1000, 0i64..1000).prop_map(|(min, span)| json!({
            "type": "integer", "minimum": min, "maximum": min + span, "default": min + span / 2
        })),
        (-1.0f64..1.0).prop_map(|d| json!({"type": "number", "minimum": -1, "maximum": 1, "default": d})),
        any::<bool>().prop_map(|d| json!({"type": "boolean", "default": d})),
        (1usize..6, any::<prop::sample::Index>()).prop_map(|(n, i)| {
            let choices: Vec<String> = (0..n).map(|k| format!("c{k}")).collect();
            let default = choices[i.index(n)].clone();
            json!({"type": "string", "enum": choices, "default": default})
        }),
        (1usize..6, any::<prop::sample::Index>()).prop_map(|(n, i)| {
            let choices: Vec<Value> = (0..n)
                .map(|k| json!({"const": format!("v{k}"), "title": format!("V{k}")}))
                .collect();
            let default = format!("v{}", i.index(n));
            json!({"type": "string", "oneOf": choices, "default": default})
        }),
        (1usize..6, any::<prop::sample::Index>()).prop_map(|(n, i)| {
            let choices: Vec<String> = (0..n).map(|k| format!("c{k}")).collect();
            let picked = i.index(n) + 1;
            json!({
                "type": "array", "minItems": 0, "maxItems": picked,
                "items": {"type": "string", "enum": choices}, "default": choices[..picked]
            })
        }),
    ]
}

proptest! {
    #[test]
    fn checker_never_panics(params in arbitrary_json()) {
        let limits = Limits::default();
        if let Ok(request) = Elicitation::from_value(params, &limits) {
            // Whatever was accepted must also survive answering.
            let _ = validate_answer(&request, &Answer::bare(ElicitationAction::Accept), &limits);
        }
    }

    #[test]
    fn answer_validation_never_panics(content in arbitrary_json()) {
        let limits = Limits::default();
        let request = Elicitation::from_value(json!({"message": "m", "requestedSchema": {
            "type": "object",
            "properties": {"type": {"type": "string"}, "enum": {"type": "array", "items": {"enum": ["a"]}}}
        }}), &limits).expect("valid");
        let answer = Answer { action: ElicitationAction::Accept, content: Some(content) };
        let _ = validate_answer(&request, &answer, &limits);
    }

    #[test]
    fn defaults_of_any_valid_form_validate(
        properties in prop::collection::vec(property_with_default(), 0..10),
        required_mask in any::<u16>(),
    ) {
        let limits = Limits::default();
        let mut props = Map::new();
        let mut required = Vec::new();
        for (i, property) in properties.into_iter().enumerate() {
            let name = format!("f{i}");
            if required_mask & (1 << i) != 0 {
                required.push(name.clone());
            }
            props.insert(name, property);
        }
        let request = Elicitation::from_value(json!({"message": "m", "requestedSchema": {
            "type": "object", "properties": props, "required": required
        }}), &limits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let defaults = request.form().expect("form").defaults();
        let answer = Answer { action: ElicitationAction::Accept, content: Some(Value::Object(defaults)) };
        prop_assert_eq!(validate_answer(&request, &answer, &limits), Ok(()));
    }
}
