//! What a pattern may cost: a compile is bounded, and a request read back
//! (from the store, or by a front-end from the broker) compiles nothing.

use std::time::{Duration, Instant};

use elicit_mcp::{Answer, Elicitation, ElicitationAction, Limits};
use serde_json::{Value, json};

/// A form of `n` text fields, each with `pattern`.
fn form_of(n: usize, pattern: &str) -> Value {
    let properties: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("f{i}"), json!({"type": "string", "pattern": pattern})))
        .collect();
    json!({"message": "m", "requestedSchema": {"type": "object", "properties": properties}})
}

#[test]
fn a_pattern_that_compiles_to_a_megabyte_is_refused() {
    // `.{750}` is 6 bytes of source and 1 MB compiled (ECMA-262's `.` is a
    // Unicode class); 64 of them made a 3 KB form cost 67 MiB.
    let errors =
        Elicitation::from_value(form_of(1, ".{750}"), &Limits::default()).expect_err("too large a program");
    let text = errors.to_string();
    assert!(
        text.contains("unsupported-pattern") && text.contains("too large"),
        "{text}"
    );
    // What real forms use still passes: a length class, a Unicode one.
    for fine in [
        "^.{1,100}$",
        "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$",
        "^[0-9A-Za-z_]{1,1000}$",
    ] {
        assert!(
            Elicitation::from_value(form_of(1, fine), &Limits::default()).is_ok(),
            "{fine}"
        );
    }
}

#[test]
fn checking_the_largest_patterns_allowed_is_quick() {
    // 64 fields of the largest Unicode repetition under the limit: the
    // whole check stays well under what a caller could make the broker
    // spend before (0.3 s a form in a release build, seconds in debug).
    let form = form_of(64, "^.{1,150}$");
    let start = Instant::now();
    Elicitation::from_value(form, &Limits::default()).expect("valid");
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn a_checked_request_is_read_back_without_compiling() {
    // A pattern over today's limit (stored when limits were larger) is
    // read back as it is: nothing is compiled on the way.
    let form = form_of(64, ".{750}");
    let start = Instant::now();
    let request = Elicitation::from_checked(form.clone(), &Limits::default()).expect("read back");
    let read_back = start.elapsed();
    assert!(read_back < Duration::from_millis(500), "{read_back:?}");
    let fields = &request.form().expect("a form").fields;
    assert_eq!(fields.len(), 64);
    // It matches nothing now, so no answer passes a check it cannot make.
    let content: serde_json::Map<String, Value> = (0..64)
        .map(|i| (format!("f{i}"), json!("x".repeat(750))))
        .collect();
    let answer = Answer {
        action: ElicitationAction::Accept,
        content: Some(Value::Object(content)),
    };
    assert!(elicit_mcp::validate_answer(&request, &answer, &Limits::default()).is_err());
}

#[test]
fn answers_are_still_matched() {
    let request = Elicitation::from_value(form_of(1, "^[A-Z]{2}$"), &Limits::default()).expect("valid");
    let answer = |text: &str| Answer {
        action: ElicitationAction::Accept,
        content: Some(json!({"f0": text})),
    };
    assert!(elicit_mcp::validate_answer(&request, &answer("AB"), &Limits::default()).is_ok());
    assert!(elicit_mcp::validate_answer(&request, &answer("ab"), &Limits::default()).is_err());
}
