//! The vectors (every set `elicit-vectors` finds: the in-repo copy, the
//! shared folder, `$ELICIT_VECTORS`), entered through the form model: every
//! valid request builds a model with its defaults, and every answer,
//! entered value by value, gets the same field errors as proto's
//! validation gives it.

use std::collections::BTreeSet;

use elicit_form::{FormModel, Input, UrlView};
use elicit_mcp::{Answer, Elicitation, ElicitationAction, FieldKind, Limits, validate_answer};
use elicit_vectors::{VectorSet, sets};
use serde_json::Value;

/// The valid requests of `set`, each named `SET: NAME`.
fn valid_requests(set: &VectorSet) -> Vec<(String, Elicitation)> {
    set.load("requests.json")
        .into_iter()
        .filter(|case| case["valid"] == Value::Bool(true))
        .map(|case| {
            let name = format!("{}: {}", set.name(), case["name"].as_str().expect("a name"));
            let request = Elicitation::from_value(case["params"].clone(), &Limits::default())
                .unwrap_or_else(|e| panic!("{name}: valid request refused: {e}"));
            (name, request)
        })
        .collect()
}

#[test]
fn every_valid_request_renders() {
    for set in sets() {
        every_valid_request_of_renders(&set);
    }
}

fn every_valid_request_of_renders(set: &VectorSet) {
    let requests = valid_requests(set);
    assert!(requests.len() >= 5, "expected the full set of request vectors");
    for (name, request) in &requests {
        if let Some(model) = FormModel::from_request(request) {
            let form = request.form().expect("form mode");
            assert_eq!(model.fields().len(), form.fields.len(), "{name}");
            // Defaults pre-filled: a user who changes nothing sends them.
            assert_eq!(model.content(), form.defaults(), "{name}: defaults");
            for state in model.fields() {
                let fits = matches!(
                    (&state.field().kind, state.input()),
                    (FieldKind::Text { .. } | FieldKind::Number { .. }, Input::Text(_))
                        | (FieldKind::Boolean, Input::Toggle(_))
                        | (FieldKind::Choice { .. }, Input::Choice(_))
                        | (FieldKind::MultiChoice { .. }, Input::Multi(_))
                );
                assert!(fits, "{name}: `{}` has the wrong input", state.field().name);
                assert!(
                    model.visible_error(0).is_none(),
                    "{name}: no error before any edit"
                );
            }
            let required_without_default = form.fields.iter().any(|f| f.required && f.default.is_none());
            assert_eq!(
                model.is_valid(),
                !required_without_default,
                "{name}: submit allowed"
            );
        } else {
            let view = UrlView::from_request(request).expect("URL mode");
            assert!(!view.host.is_empty(), "{name}: the host is highlighted");
            assert_eq!(
                format!("{}{}{}", view.before_host, view.host, view.after_host),
                view.full,
                "{name}"
            );
        }
    }
}

#[test]
fn every_content_case_gets_the_right_field_errors_through_the_model() {
    for set in sets() {
        every_content_case_of_gets_the_right_field_errors(&set);
    }
}

fn every_content_case_of_gets_the_right_field_errors(set: &VectorSet) {
    let requests = valid_requests(set);
    let limits = Limits::default();
    let cases = set.load("contents.json");
    assert!(
        cases.len() >= 30,
        "{}: expected the full set of content vectors",
        set.name()
    );
    for case in &cases {
        let name = &format!("{}: {}", set.name(), case["name"].as_str().expect("a name"));
        let request_name = format!(
            "{}: {}",
            set.name(),
            case["request"].as_str().expect("a request name")
        );
        let request = &requests
            .iter()
            .find(|(n, _)| *n == request_name)
            .unwrap_or_else(|| panic!("{name}: no valid request {}", case["request"]))
            .1;
        let answer: Answer = serde_json::from_value(serde_json::json!({
            "action": case["action"], "content": case["content"],
        }))
        .unwrap_or_else(|e| panic!("{name}: not an answer: {e}"));
        let valid = case["valid"] == Value::Bool(true);
        let Some(mut model) = FormModel::from_request(request) else {
            continue; // URL mode: no fields to enter.
        };
        if answer.action != ElicitationAction::Accept {
            // The model's own decline and cancel never carry content.
            let own = match answer.action {
                ElicitationAction::Decline => FormModel::decline(),
                _ => FormModel::cancel(),
            };
            assert_eq!(validate_answer(request, &own, &limits), Ok(()), "{name}");
            continue;
        }
        model.clear_all();
        let mut refused = BTreeSet::new();
        if let Some(Value::Object(content)) = &answer.content {
            for (key, value) in content {
                if let Err(error) = model.set_value(key, value) {
                    assert!(!error.message.is_empty(), "{name}: refused without a reason");
                    refused.insert(error.field);
                }
            }
        }
        let expected: BTreeSet<String> = match validate_answer(request, &answer, &limits) {
            Ok(()) => BTreeSet::new(),
            Err(errors) => errors.into_iter().map(|e| e.field).collect(),
        };
        let in_model: BTreeSet<String> = model.errors().into_iter().map(|e| e.field).collect();
        let mut got = in_model.clone();
        got.extend(refused);
        assert_eq!(got, expected, "{name}: field errors ({})", case["why"]);
        assert_eq!(expected.is_empty(), valid, "{name}: the vector's verdict");
        // A key the form lacks is refused on entry and never sent, so such
        // a model may be valid; anything else must block the submit.
        match model.submit() {
            Ok(sent) => {
                assert!(in_model.is_empty(), "{name}: submitted with errors");
                if valid {
                    assert_eq!(sent.content, answer.content, "{name}: sent what was entered");
                }
                assert_eq!(
                    validate_answer(request, &sent, &limits),
                    Ok(()),
                    "{name}: sent a valid answer"
                );
            }
            Err(errors) => {
                assert!(!in_model.is_empty(), "{name}: refused a valid answer: {errors:?}");
                for (i, _) in model.fields().iter().enumerate() {
                    let shown = model.visible_error(i).is_some();
                    let listed = errors.iter().any(|e| model.fields()[i].field().name == e.field);
                    assert_eq!(shown, listed, "{name}: every error shows after submit");
                }
            }
        }
    }
}
