//! The built-in secret guard against the project's lists of realistic
//! forms: `secret-guard/positives.txt` (each asks for a secret) and
//! `secret-guard/negatives.txt` (none does). Prints the figures that
//! RULES.md quotes; every positive must be caught and no negative flagged.

mod common;

use std::path::Path;

use common::{origin, request};
use elicit_proto::Elicitation;
use elicitd_policy::{Policy, Verdict};
use serde_json::json;

/// One line of a list: the form it describes, and the line for messages.
struct Case {
    line: String,
    request: Elicitation,
}

fn read_list(name: &str) -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/secret-guard")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|line| Case {
            line: line.to_owned(),
            request: parse(line),
        })
        .collect()
}

/// `name | title | description | message | type | choices`, with
/// `\u{XXXX}` escapes; see the head of positives.txt.
fn parse(line: &str) -> Elicitation {
    let parts: Vec<String> = line.split('|').map(|part| unescape(part.trim())).collect();
    let part = |i: usize| parts.get(i).filter(|p| !p.is_empty()).cloned();
    let name = part(0).unwrap_or_else(|| panic!("no name: {line}"));
    let kind = part(4).unwrap_or_else(|| "string".into());
    let mut property = match part(5) {
        Some(choices) => choice_property(&kind, &choices),
        None => json!({"type": kind}),
    };
    if let Some(title) = part(1) {
        property["title"] = json!(title);
    }
    if let Some(description) = part(2) {
        property["description"] = json!(description);
    }
    let message = part(3).unwrap_or_else(|| "Please fill this in".into());
    request(json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {name: property}}
    }))
}

/// A choice field of `kind` (`enum`, `oneOf`, `anyOf`, `enumNames` or
/// `array`) from `value=label, …` (a bare value is its own label).
fn choice_property(kind: &str, choices: &str) -> serde_json::Value {
    let pairs: Vec<(String, String)> = choices
        .split(',')
        .map(str::trim)
        .map(|choice| match choice.split_once('=') {
            Some((value, label)) => (value.to_owned(), label.to_owned()),
            None => (choice.to_owned(), choice.to_owned()),
        })
        .collect();
    let values: Vec<&str> = pairs.iter().map(|(v, _)| v.as_str()).collect();
    let titled: Vec<serde_json::Value> = pairs
        .iter()
        .map(|(value, label)| json!({"const": value, "title": label}))
        .collect();
    match kind {
        "enum" => json!({"type": "string", "enum": values}),
        "oneOf" => json!({"type": "string", "oneOf": titled}),
        "anyOf" => json!({"type": "array", "items": {"anyOf": titled}}),
        "enumNames" => {
            let names: Vec<&str> = pairs.iter().map(|(_, l)| l.as_str()).collect();
            json!({"type": "string", "enum": values, "enumNames": names})
        }
        "array" => json!({"type": "array", "items": {"type": "string", "enum": values}}),
        other => panic!("unknown choice kind {other}"),
    }
}

fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\\u{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let end = after.find('}').expect("a closing brace");
        let code = u32::from_str_radix(&after[..end], 16).expect("hex");
        out.push(char::from_u32(code).expect("a character"));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn declined(policy: &Policy, case: &Case) -> bool {
    let decision = policy.decide(&case.request, &origin("srv", None), "s");
    decision.verdict == Verdict::Decline && decision.decided_by == "built-in: secret-guard"
}

#[test]
fn the_guard_catches_every_positive_and_flags_no_negative() {
    let policy = Policy::load(&[]).expect("the built-in rules load");
    let positives = read_list("positives.txt");
    let negatives = read_list("negatives.txt");
    let missed: Vec<&str> = positives
        .iter()
        .filter(|case| !declined(&policy, case))
        .map(|case| case.line.as_str())
        .collect();
    let alarms: Vec<&str> = negatives
        .iter()
        .filter(|case| declined(&policy, case))
        .map(|case| case.line.as_str())
        .collect();
    println!(
        "secret guard: caught {}/{} positives, false alarms {}/{} negatives",
        positives.len() - missed.len(),
        positives.len(),
        alarms.len(),
        negatives.len()
    );
    assert!(
        positives.len() >= 300 && negatives.len() >= 210,
        "the lists shrank"
    );
    assert!(
        missed.is_empty() && alarms.is_empty(),
        "missed:\n{}\nfalse alarms:\n{}",
        missed.join("\n"),
        alarms.join("\n")
    );
}
