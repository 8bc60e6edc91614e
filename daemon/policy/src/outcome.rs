//! Reading what a rule returned, strictly: anything that is not plainly a
//! verdict is an error of the rule, and errors never become accepts.

use elicit_proto::{Elicitation, ElicitationAction, Limits, validate_answer};
use rhai::{Dynamic, Map};
use serde_json::Value;

use crate::verdict::Verdict;

/// A rule's verdict with its reason; `None` when the rule passed.
pub(crate) type Spoken = Option<(Verdict, Option<String>)>;

/// Interprets a rule's return value: `()` passes; `"ask"`, `"decline"`,
/// `"cancel"`, `"accept"` or a map from the verdict helpers decide.
pub(crate) fn interpret(value: Dynamic, request: &Elicitation, limits: &Limits) -> Result<Spoken, String> {
    if value.is_unit() {
        return Ok(None);
    }
    if value.is_string() {
        let name = value.into_string().unwrap_or_default();
        return verdict(&name, request, limits).map(|v| Some((v, None)));
    }
    let type_name = value.type_name();
    let Some(map) = value.try_cast::<Map>() else {
        return Err(format!("returned {type_name}, which is not a verdict"));
    };
    from_map(map, request, limits).map(Some)
}

fn from_map(
    mut map: Map,
    request: &Elicitation,
    limits: &Limits,
) -> Result<(Verdict, Option<String>), String> {
    let name = map
        .remove("verdict")
        .and_then(|v| v.into_string().ok())
        .ok_or("returned a map without a `verdict` string")?;
    let reason = match map.remove("reason") {
        None => None,
        Some(reason) if reason.is_unit() => None,
        Some(reason) => Some(
            reason
                .into_string()
                .map_err(|t| format!("gave a reason of type {t}, not a string"))?,
        ),
    };
    let content = map.remove("content");
    if let Some(key) = map.keys().next() {
        return Err(format!("returned a verdict with the unknown key `{key}`"));
    }
    let verdict = match (name.as_str(), content) {
        ("accept", Some(content)) => accept(content, request, limits)?,
        (_, Some(_)) => return Err(format!("gave content with `{name}`; only accept carries content")),
        (name, None) => verdict(name, request, limits)?,
    };
    Ok((verdict, reason))
}

fn verdict(name: &str, request: &Elicitation, limits: &Limits) -> Result<Verdict, String> {
    match name {
        "ask" => Ok(Verdict::Ask),
        "decline" => Ok(Verdict::Decline),
        "cancel" => Ok(Verdict::Cancel),
        "accept" => accept(Dynamic::UNIT, request, limits),
        other => Err(format!(
            "returned \"{other}\", which is not one of ask, decline, cancel, accept"
        )),
    }
}

/// An accept is only as good as its content: it must pass the same check
/// as a human's answer.
fn accept(content: Dynamic, request: &Elicitation, limits: &Limits) -> Result<Verdict, String> {
    let content: Value = if content.is_unit() {
        Value::Null
    } else {
        rhai::serde::from_dynamic(&content).map_err(|e| format!("gave content that is not JSON: {e}"))?
    };
    let verdict = Verdict::Accept(content);
    check(&verdict, request, limits)?;
    Ok(verdict)
}

/// Checks an accept's content against the request, as any answer is checked.
pub(crate) fn check(verdict: &Verdict, request: &Elicitation, limits: &Limits) -> Result<(), String> {
    match verdict.to_answer() {
        Some(answer) if answer.action == ElicitationAction::Accept => {
            validate_answer(request, &answer, limits).map_err(|errors| {
                let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
                format!(
                    "accepted with content that does not fit the form: {}",
                    errors.join("; ")
                )
            })
        }
        _ => Ok(()),
    }
}

/// Checks a remembered verdict against a new request: as [`check`], and an
/// accept must also give every field, because it was remembered for a
/// form that had exactly those.
pub(crate) fn check_remembered(
    verdict: &Verdict,
    request: &Elicitation,
    limits: &Limits,
) -> Result<(), String> {
    check(verdict, request, limits)?;
    let (Verdict::Accept(content), Some(form)) = (verdict, request.form()) else {
        return Ok(());
    };
    let missing: Vec<&str> = form
        .fields
        .iter()
        .filter(|field| content.get(&field.name).is_none())
        .map(|field| field.name.as_str())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("the remembered answer leaves out {}", missing.join(", ")))
    }
}
