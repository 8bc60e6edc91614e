//! The vectors (every set `elicit-vectors` finds: the in-repo copy, the
//! shared folder beside the checkout, `$ELICIT_VECTORS`): every case must
//! get its expected verdict. A set named but missing fails the test.

use std::collections::HashMap;

use elicit_proto::{Answer, Elicitation, Limits, Location, validate_answer};
use elicit_vectors::{VectorSet, sets};
use serde_json::Value;

fn field<'a>(case: &'a Value, key: &str) -> &'a Value {
    case.get(key)
        .unwrap_or_else(|| panic!("vector {case} lacks `{key}`"))
}

#[test]
fn every_request_vector_gets_its_verdict() {
    for set in sets() {
        every_request_vector_of_gets_its_verdict(&set);
    }
}

fn every_request_vector_of_gets_its_verdict(set: &VectorSet) {
    let cases = set.load("requests.json");
    assert!(
        cases.len() >= 30,
        "{}: expected the full set of request vectors",
        set.name()
    );
    let limits = Limits::default();
    for case in &cases {
        let name = format!("{}: {}", set.name(), field(case, "name"));
        let valid = field(case, "valid").as_bool().expect("valid is a boolean");
        let params = field(case, "params").clone();
        // A property may be named by `properties` or only by `required`.
        let mut known_properties: Vec<String> = params
            .pointer("/requestedSchema/properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(required) = params
            .pointer("/requestedSchema/required")
            .and_then(Value::as_array)
        {
            known_properties.extend(required.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        match (Elicitation::from_value(params, &limits), valid) {
            (Ok(_), true) => {}
            (Err(errors), false) => {
                assert!(!errors.0.is_empty(), "{name}: refused without a reason");
                for error in &errors.0 {
                    let text = error.to_string();
                    assert!(
                        text.starts_with(&error.location.to_string())
                            && text.contains(&format!("[{}]", error.rule)),
                        "{name}: `{text}` must name where and which rule"
                    );
                    if let Location::Property(property) = &error.location {
                        assert!(
                            known_properties.contains(property),
                            "{name}: `{property}` is not a property of the request"
                        );
                    }
                }
            }
            (Ok(_), false) => panic!("{name}: accepted, but {}", field(case, "why")),
            (Err(errors), true) => panic!("{name}: refused ({errors}), but {}", field(case, "why")),
        }
    }
}

#[test]
fn every_content_vector_gets_its_verdict() {
    for set in sets() {
        every_content_vector_of_gets_its_verdict(&set);
    }
}

fn every_content_vector_of_gets_its_verdict(set: &VectorSet) {
    let limits = Limits::default();
    let requests: HashMap<String, Elicitation> = set
        .load("requests.json")
        .into_iter()
        .filter(|case| case["valid"] == Value::Bool(true))
        .map(|case| {
            let request = Elicitation::from_value(case["params"].clone(), &limits).expect("valid request");
            (case["name"].as_str().expect("name").to_owned(), request)
        })
        .collect();
    let cases = set.load("contents.json");
    assert!(
        cases.len() >= 30,
        "{}: expected the full set of content vectors",
        set.name()
    );
    for case in &cases {
        let name = format!("{}: {}", set.name(), field(case, "name"));
        let request_name = field(case, "request").as_str().expect("request is a name");
        let request = requests
            .get(request_name)
            .unwrap_or_else(|| panic!("{name}: no valid request named {request_name}"));
        let answer: Answer = serde_json::from_value(serde_json::json!({
            "action": field(case, "action"),
            "content": field(case, "content"),
        }))
        .unwrap_or_else(|e| panic!("{name}: not an answer: {e}"));
        let valid = field(case, "valid").as_bool().expect("valid is a boolean");
        match (validate_answer(request, &answer, &limits), valid) {
            (Ok(()), true) => {}
            (Err(errors), false) => {
                assert!(!errors.is_empty(), "{name}: refused without a reason");
                for error in &errors {
                    let form_has_it = request.form().is_some_and(|f| f.field(&error.field).is_some());
                    let asked_extra = answer
                        .content
                        .as_ref()
                        .and_then(|c| c.get(&error.field))
                        .is_some();
                    assert!(
                        error.field.is_empty() || form_has_it || asked_extra,
                        "{name}: error names an unknown field: {error}"
                    );
                    assert!(!error.message.is_empty());
                }
            }
            (Ok(()), false) => panic!("{name}: accepted, but {}", field(case, "why")),
            (Err(errors), true) => panic!("{name}: refused ({errors:?}), but {}", field(case, "why")),
        }
    }
}
