//! One field's edit state: what the user has entered, and what it means.

use elicit_mcp::{Field, FieldKind};
use serde_json::{Number, Value};

use crate::hint::kind_hint;
use crate::text::TextInput;

/// What the user has entered into one field, by the kind of input it needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Text, email, URI, date and number fields: the text being typed.
    Text(TextInput),
    /// A checkbox; `None` until answered (sent as no value at all).
    Toggle(Option<bool>),
    /// A single select: the index of the chosen [`elicit_mcp::Choice`].
    Choice(Option<usize>),
    /// A multi select.
    Multi(MultiInput),
}

/// The state of a multi select.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiInput {
    /// One flag per choice, in the form's order.
    pub selected: Vec<bool>,
    /// Whether the field has an answer; an empty list is an answer, an
    /// untouched field without a default is none.
    pub answered: bool,
    /// The choice a keyboard user is on (toolkits with their own focus
    /// handling ignore it).
    pub cursor: usize,
}

impl MultiInput {
    /// How many choices are selected.
    pub fn count(&self) -> usize {
        self.selected.iter().filter(|s| **s).count()
    }
}

/// One field of a [`crate::FormModel`]: its description, its input and its
/// error.
#[derive(Debug, Clone)]
pub struct FieldState {
    pub(crate) field: Field,
    pub(crate) input: Input,
    /// Edited since the form was shown.
    pub(crate) edited: bool,
    /// Edited and then left: its error may now be shown.
    pub(crate) touched: bool,
    /// A value given through `set_value` that this input cannot hold, and why.
    pub(crate) rejected: Option<String>,
    /// What the daemon said about the last submitted value.
    pub(crate) server_error: Option<String>,
    /// The error of the current input, from parsing or validation.
    pub(crate) error: Option<String>,
}

impl FieldState {
    pub(crate) fn new(field: Field) -> Self {
        let input = empty_input(&field.kind);
        let mut state = FieldState {
            field,
            input,
            edited: false,
            touched: false,
            rejected: None,
            server_error: None,
            error: None,
        };
        if let Some(default) = state.field.default.clone() {
            // Defaults were checked against the field by proto; one that does
            // not fit the input is left out rather than shown wrongly.
            let _ = state.load(&default);
        }
        state
    }

    /// The field as the form describes it (name, label, help, required…).
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// What the user has entered.
    pub fn input(&self) -> &Input {
        &self.input
    }

    /// The current error, whether or not it should be shown yet: a value
    /// that could not be shown, the daemon's verdict on the value as it
    /// still is, or a parse or validation error.
    pub fn error(&self) -> Option<&str> {
        self.rejected
            .as_deref()
            .or(self.server_error.as_deref())
            .or(self.error.as_deref())
    }

    /// Whether the user has changed this field since it was shown.
    pub fn is_edited(&self) -> bool {
        self.edited
    }

    /// A short hint of what to enter (format, bounds, item counts).
    pub fn hint(&self) -> Option<String> {
        kind_hint(&self.field.kind)
    }

    /// The value to send: `Ok(None)` when the field has no answer, `Err`
    /// when the text does not parse as the field's kind.
    pub fn value(&self) -> Result<Option<Value>, String> {
        match (&self.input, &self.field.kind) {
            (Input::Text(text), _) if text.is_empty() => Ok(None),
            (Input::Text(text), FieldKind::Number { integer, .. }) => {
                parse_number(text.text(), *integer).map(Some)
            }
            (Input::Text(text), _) => Ok(Some(Value::String(text.text().to_owned()))),
            (Input::Toggle(value), _) => Ok(value.map(Value::Bool)),
            (Input::Choice(index), FieldKind::Choice { choices }) => Ok(index
                .and_then(|i| choices.get(i))
                .map(|choice| Value::String(choice.value.clone()))),
            (Input::Multi(multi), FieldKind::MultiChoice { choices, .. }) if multi.answered => {
                let values = choices
                    .iter()
                    .zip(&multi.selected)
                    .filter(|(_, selected)| **selected)
                    .map(|(choice, _)| Value::String(choice.value.clone()))
                    .collect();
                Ok(Some(Value::Array(values)))
            }
            _ => Ok(None),
        }
    }

    /// Puts `value` into the input; `Err(())` when the input cannot hold
    /// it (a value of the wrong type, or not one of the choices).
    pub(crate) fn load(&mut self, value: &Value) -> Result<(), ()> {
        let input = match (&self.field.kind, value) {
            (FieldKind::Text { .. }, Value::String(text)) => Input::Text(TextInput::new(text.clone())),
            (FieldKind::Number { .. }, Value::Number(number)) => {
                Input::Text(TextInput::new(number.to_string()))
            }
            (FieldKind::Boolean, Value::Bool(b)) => Input::Toggle(Some(*b)),
            (FieldKind::Choice { choices }, Value::String(chosen)) => {
                Input::Choice(Some(choices.iter().position(|c| c.value == *chosen).ok_or(())?))
            }
            (FieldKind::MultiChoice { choices, .. }, Value::Array(items)) => {
                let mut selected = vec![false; choices.len()];
                for item in items {
                    let index = item
                        .as_str()
                        .and_then(|v| choices.iter().position(|c| c.value == v))
                        .ok_or(())?;
                    // A duplicate cannot be shown by checkboxes, so it is
                    // refused like any other value the input cannot hold.
                    if std::mem::replace(&mut selected[index], true) {
                        return Err(());
                    }
                }
                Input::Multi(MultiInput {
                    selected,
                    answered: true,
                    cursor: 0,
                })
            }
            _ => return Err(()),
        };
        self.input = input;
        Ok(())
    }

    /// Empties the input: the field then has no answer.
    pub(crate) fn clear(&mut self) {
        self.input = empty_input(&self.field.kind);
    }
}

fn empty_input(kind: &FieldKind) -> Input {
    match kind {
        FieldKind::Text { .. } | FieldKind::Number { .. } => Input::Text(TextInput::default()),
        FieldKind::Boolean => Input::Toggle(None),
        FieldKind::Choice { .. } => Input::Choice(None),
        FieldKind::MultiChoice { choices, .. } => Input::Multi(MultiInput {
            selected: vec![false; choices.len()],
            answered: false,
            cursor: 0,
        }),
    }
}

/// Parses typed text as a JSON number. Whole numbers become JSON integers
/// (so `7.0` typed into an integer field is sent as `7`); anything else is
/// left for validation to judge, so its message is the daemon's.
fn parse_number(text: &str, integer: bool) -> Result<Value, String> {
    let text = text.trim();
    if let Ok(n) = text.parse::<i64>() {
        return Ok(Value::from(n));
    }
    let wanted = if integer {
        elicit_i18n::tr("must be a whole number, such as 42")
    } else {
        elicit_i18n::tr("must be a number, such as 3.5")
    };
    let n: f64 = text.parse().map_err(|_| wanted.clone())?;
    if !n.is_finite() {
        return Err(wanted);
    }
    // i64 holds every whole number an f64 can state exactly below 2^63.
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        return Ok(Value::from(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| wanted.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_to_json() {
        assert_eq!(parse_number("7", true), Ok(Value::from(7)));
        assert_eq!(parse_number(" 7.0 ", true), Ok(Value::from(7)));
        assert_eq!(parse_number("0.5", false), Ok(serde_json::json!(0.5)));
        assert_eq!(parse_number("2.5", true), Ok(serde_json::json!(2.5)));
        assert!(parse_number("abc", true).is_err());
        assert!(parse_number("inf", false).is_err());
        assert!(parse_number("NaN", false).is_err());
    }
}
