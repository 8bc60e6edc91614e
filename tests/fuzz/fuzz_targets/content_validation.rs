//! Content validation: a checked form and an answer to it.
//!
//! Inputs are either JSON `{"params": …, "answer": {"action", "content"}}`
//! (the seed corpus, made from the shared vectors and the packaged
//! examples) or bytes that steer a generator of forms and of answers built
//! field by field. `validate_answer` must never panic; what it accepts must
//! fit the form by an independent reading; what it refuses comes with
//! reasons attached to real fields.

#![no_main]

use arbitrary::Unstructured;
use elicit_proto::{Answer, Elicitation, ElicitationAction, Limits, validate_answer};
use elicitd_fuzz::{answer_for, check_accepted_content, limits, params};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn check(elicitation: &Elicitation, answer: &Answer, limits: &Limits) {
    let verdict = validate_answer(elicitation, answer, limits);
    // Validation is a pure function of its inputs.
    assert_eq!(verdict, validate_answer(elicitation, answer, limits));
    match verdict {
        Ok(()) => match (answer.action.clone(), elicitation.form()) {
            (ElicitationAction::Accept, Some(form)) => {
                check_accepted_content(form, answer.content.as_ref());
                let size = serde_json::to_vec(&answer.content).map_or(0, |v| v.len());
                assert!(size <= limits.max_answer_bytes.max(4));
            }
            // Decline, cancel and URL consent carry nothing.
            _ => assert!(match &answer.content {
                None | Some(Value::Null) => true,
                Some(Value::Object(map)) => map.is_empty(),
                Some(_) => false,
            }),
        },
        Err(errors) => {
            assert!(!errors.is_empty(), "a refusal without a reason");
            let content = answer.content.as_ref().and_then(Value::as_object);
            for error in &errors {
                assert!(!error.message.is_empty());
                assert!(!error.to_string().is_empty());
                let known = error.field.is_empty()
                    || elicitation.form().and_then(|f| f.field(&error.field)).is_some()
                    || content.is_some_and(|c| c.contains_key(&error.field));
                assert!(known, "an error on a field that is nowhere: {error:?}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(Value::Object(case)) = serde_json::from_slice::<Value>(data) {
        let limits = Limits::default();
        let (Some(params), Some(answer)) = (case.get("params"), case.get("answer")) else {
            return;
        };
        let (Ok(elicitation), Ok(answer)) = (
            Elicitation::from_value(params.clone(), &limits),
            serde_json::from_value::<Answer>(answer.clone()),
        ) else {
            return;
        };
        check(&elicitation, &answer, &limits);
        return;
    }
    let mut u = Unstructured::new(data);
    let (Ok(limits), Ok(params)) = (limits(&mut u), params(&mut u)) else {
        return;
    };
    let Ok(elicitation) = Elicitation::from_value(params, &limits) else {
        return;
    };
    // Several answers per form: forms that pass are the costly part.
    for _ in 0..4 {
        let Ok(answer) = answer_for(&mut u, elicitation.form()) else {
            return;
        };
        check(&elicitation, &answer, &limits);
    }
});
