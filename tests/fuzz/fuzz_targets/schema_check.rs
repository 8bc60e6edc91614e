//! The schema check: arbitrary bytes as JSON text, and structure-aware
//! params built from the same bytes. It must never panic; a refusal names
//! where and which rule; an accepted form's own defaults are valid answers;
//! a pattern matches exactly what the ECMA-262 engine `regress` matches.

#![no_main]

use arbitrary::Unstructured;
use elicit_proto::{Elicitation, FieldKind, Limits};
use elicitd_fuzz::{check_accepted, check_refusal, limits, params};
use libfuzzer_sys::fuzz_target;

fn check(outcome: Result<Elicitation, elicit_proto::SchemaErrors>, limits: &Limits) {
    match outcome {
        Ok(elicitation) => check_accepted(&elicitation, limits),
        Err(errors) => check_refusal(&errors),
    }
}

fuzz_target!(|data: &[u8]| {
    // The bytes as the text a server sent (what `elicit check` and the
    // broker's D-Bus `Submit` parse).
    if let Ok(text) = std::str::from_utf8(data) {
        let limits = Limits::default();
        check(Elicitation::parse_str(text, &limits), &limits);
    }
    // The same bytes steering a generator of near-valid params.
    let mut u = Unstructured::new(data);
    let (Ok(limits), Ok(params)) = (limits(&mut u), params(&mut u)) else {
        return;
    };
    let text = serde_json::to_string(&params).expect("a Value serialises");
    let from_text = Elicitation::parse_str(&text, &limits);
    let from_value = Elicitation::from_value(params, &limits);
    // Text and value give the same verdict whenever the text is within the
    // size limit (the value path has no text to measure).
    if text.len() <= limits.max_request_bytes {
        assert_eq!(
            from_text.as_ref().map(|_| ()).map_err(|e| e.to_string()),
            from_value.as_ref().map(|_| ()).map_err(|e| e.to_string()),
            "text and value disagree on {text}"
        );
    }
    // Patterns are matched by a linear-time translation; on short texts
    // (where backtracking is still quick) it must agree with regress.
    if let Ok(elicitation) = &from_value
        && let Some(form) = elicitation.form()
    {
        for field in &form.fields {
            let FieldKind::Text {
                pattern: Some(pattern),
                ..
            } = &field.kind
            else {
                continue;
            };
            let oracle = regress::Regex::new(pattern.source()).expect("accepted patterns compile");
            for _ in 0..4 {
                let Ok(sample) = elicitd_fuzz::text(&mut u) else {
                    break;
                };
                let sample: String = sample.chars().take(12).collect();
                assert_eq!(
                    pattern.is_match(&sample),
                    oracle.find(&sample).is_some(),
                    "pattern {:?} on {sample:?}",
                    pattern.source()
                );
            }
        }
    }
    check(from_value, &limits);
});
