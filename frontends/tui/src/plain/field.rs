//! Asking for one field in words, and reading the answer typed.

use std::io::{self, Write};

use elicit_form::{FormModel, Input};
use elicit_i18n::{fill, tr};
use elicit_proto::FieldKind;

use super::Step;

/// Asks for field `i`.
pub(super) fn ask(out: &mut impl Write, model: &FormModel, i: usize) -> io::Result<()> {
    let Some(state) = model.field(i) else {
        return Ok(());
    };
    let field = state.field();
    let heading = tr("Field {n} of {count}: {label}");
    let values: [(&str, &dyn std::fmt::Display); 3] = [
        ("n", &(i + 1)),
        ("count", &model.fields().len()),
        ("label", &field.label),
    ];
    write!(out, "{}", fill(&heading, &values))?;
    if field.required {
        write!(out, " {}", tr("(required)"))?;
    }
    if let Some(hint) = state.hint() {
        write!(out, ", {hint}")?;
    }
    writeln!(out)?;
    if let Some(help) = &field.help {
        writeln!(out, "  {help}")?;
    }
    match (&field.kind, state.input()) {
        (FieldKind::Choice { choices }, _) | (FieldKind::MultiChoice { choices, .. }, _) => {
            for (n, choice) in choices.iter().enumerate() {
                writeln!(out, "  {}) {}", n + 1, choice.label)?;
            }
            if matches!(field.kind, FieldKind::MultiChoice { .. }) {
                writeln!(
                    out,
                    "  {}",
                    tr("Type the numbers, separated by spaces or commas.")
                )?;
            } else {
                writeln!(out, "  {}", tr("Type a number."))?;
            }
        }
        // TRANSLATORS: y and n are typed as they are.
        (FieldKind::Boolean, _) => writeln!(out, "  {}", tr("Type y or n."))?,
        _ => {}
    }
    write!(out, "{} [{}]: ", field.label, shown(state.input(), &field.kind))?;
    out.flush()
}

/// Enters `line` into field `i`; returns the next step, or `None` to ask
/// again (the entry was not understood or the field has an error).
pub(super) fn enter(
    out: &mut impl Write,
    model: &mut FormModel,
    i: usize,
    line: &str,
) -> io::Result<Option<Step>> {
    let Some(state) = model.field(i) else {
        return Ok(Some(Step::Review));
    };
    let kind = state.field().kind.clone();
    let understood = match (line, state.input()) {
        ("", _) => true,
        ("-", _) => model.clear(i),
        (text, Input::Text(_)) => model.set_text(i, text),
        (text, Input::Toggle(_)) => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => model.set_toggle(i, Some(true)),
            "n" | "no" | "false" | "0" => model.set_toggle(i, Some(false)),
            _ => false,
        },
        (text, Input::Choice(_)) => {
            let choices = match &kind {
                FieldKind::Choice { choices } => choices.as_slice(),
                _ => &[],
            };
            pick(text, choices).is_some_and(|n| model.select(i, Some(n)))
        }
        (text, Input::Multi(_)) => {
            let choices = match &kind {
                FieldKind::MultiChoice { choices, .. } => choices.as_slice(),
                _ => &[],
            };
            let picked: Option<Vec<usize>> = text
                .split([',', ' '])
                .filter(|t| !t.is_empty())
                .map(|t| pick(t, choices))
                .collect();
            match picked {
                Some(picked) => {
                    model.clear(i);
                    // An empty list is an answer too: mark the field answered.
                    for n in &picked {
                        model.toggle_item(i, *n);
                    }
                    true
                }
                None => false,
            }
        }
    };
    if !understood {
        writeln!(out, "! {}", tr("Not understood; type :? for help."))?;
        return Ok(None);
    }
    if let Some(state) = model.field(i)
        && let Some(error) = state.error()
    {
        writeln!(out, "! {} {error}", state.field().label)?;
        return Ok(None);
    }
    model.focus_next();
    Ok(Some(if i + 1 < model.fields().len() {
        Step::Field(i + 1)
    } else {
        Step::Review
    }))
}

/// A choice by number (from 1), value or label.
fn pick(text: &str, choices: &[elicit_proto::Choice]) -> Option<usize> {
    if let Ok(n) = text.parse::<usize>() {
        return (1..=choices.len()).contains(&n).then(|| n - 1);
    }
    choices
        .iter()
        .position(|c| c.value == text || c.label.eq_ignore_ascii_case(text))
}

/// A field's current value in words.
pub(super) fn shown(input: &Input, kind: &FieldKind) -> String {
    match (input, kind) {
        (Input::Text(text), _) => text.text().to_owned(),
        (Input::Toggle(Some(true)), _) => tr("yes"),
        (Input::Toggle(Some(false)), _) => tr("no"),
        (Input::Toggle(None), _) | (Input::Choice(None), _) => String::new(),
        (Input::Choice(Some(n)), FieldKind::Choice { choices }) => {
            choices.get(*n).map(|c| c.label.clone()).unwrap_or_default()
        }
        (Input::Multi(multi), FieldKind::MultiChoice { choices, .. }) => choices
            .iter()
            .zip(&multi.selected)
            .filter(|(_, on)| **on)
            .map(|(c, _)| c.label.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}
