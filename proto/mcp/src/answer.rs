//! Content validation: is this answer one the server asked for?

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::form::{Field, FieldKind};
use crate::formats;
use crate::request::{Elicitation, Mode};
use crate::schema::{kind_of, whole_number};
use crate::{ElicitResult, ElicitationAction, Limits};

/// An answer as front-ends and `elicit check --answer` give it:
/// `{"action": …, "content": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// accept, decline or cancel.
    pub action: ElicitationAction,
    /// The values, on accept in form mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

impl Answer {
    /// An answer with no content.
    pub fn bare(action: ElicitationAction) -> Self {
        Answer {
            action,
            content: None,
        }
    }

    /// The answer as the server should get it, whoever gave it: on a form
    /// accept, every omitted field that has a schema `default` is filled
    /// with it (MCP clients "pre-fill defaults", and a script or a rule that
    /// leaves a field out means the same as a user who left it alone); a
    /// URL-mode accept, a decline and a cancel carry no content. Content
    /// that is not an object is left for [`validate_answer`] to refuse.
    pub fn completed(mut self, request: &Elicitation) -> Self {
        match (&request.mode, &self.action) {
            (Mode::Form(form), ElicitationAction::Accept) => {
                let mut values = match self.content.take() {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(values)) => values,
                    Some(other) => {
                        self.content = Some(other);
                        return self;
                    }
                };
                for (name, default) in form.defaults() {
                    values.entry(name).or_insert(default);
                }
                self.content = Some(Value::Object(values));
            }
            _ if is_empty(self.content.as_ref()) => self.content = None,
            _ => {}
        }
        self
    }

    /// The MCP result to send to the server.
    pub fn into_result(self) -> ElicitResult {
        let mut result = ElicitResult::new(self.action);
        result.content = self.content;
        result
    }
}

/// One problem with an answer, worded to be shown next to its field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The property name, or `""` for the answer as a whole.
    pub field: String,
    /// What is wrong, as a phrase that follows the field's label.
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "answer: {}", self.message)
        } else {
            write!(f, "`{}`: {}", self.field, self.message)
        }
    }
}

fn whole(message: impl Into<String>) -> FieldError {
    FieldError {
        field: String::new(),
        message: message.into(),
    }
}

/// Content that counts as "no content": absent, `null` or `{}`.
fn is_empty(content: Option<&Value>) -> bool {
    match content {
        None | Some(Value::Null) => true,
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    }
}

/// Validates `answer` against `request`; every problem is returned, each
/// attached to its field.
pub fn validate_answer(
    request: &Elicitation,
    answer: &Answer,
    limits: &Limits,
) -> Result<(), Vec<FieldError>> {
    let content = answer.content.as_ref();
    if let Some(content) = content {
        let size = serde_json::to_vec(content).map(|v| v.len()).unwrap_or(usize::MAX);
        if size > limits.max_answer_bytes {
            return Err(vec![whole(format!(
                "content is {size} bytes, more than the limit of {}",
                limits.max_answer_bytes
            ))]);
        }
    }
    let form = match (&request.mode, &answer.action) {
        (_, ElicitationAction::Decline | ElicitationAction::Cancel) => {
            return if is_empty(content) {
                Ok(())
            } else {
                Err(vec![whole(
                    "only accept carries content; decline and cancel carry none",
                )])
            };
        }
        (Mode::Url { .. }, ElicitationAction::Accept) => {
            return if is_empty(content) {
                Ok(())
            } else {
                Err(vec![whole(
                    "a URL-mode accept means consent and carries no content",
                )])
            };
        }
        (Mode::Form(form), ElicitationAction::Accept) => form,
        // rmcp marks the action enum non-exhaustive; a future action is not
        // one this broker can vouch for.
        (_, action) => return Err(vec![whole(format!("unknown action {action:?}"))]),
    };
    let empty = Map::new();
    let values = match content {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(values)) => values,
        Some(other) => {
            return Err(vec![whole(format!(
                "content must be an object, not {}",
                kind_of(other)
            ))]);
        }
    };
    let mut errors = Vec::new();
    for key in values.keys() {
        if form.field(key).is_none() {
            errors.push(FieldError {
                field: key.clone(),
                message: "was not asked for".into(),
            });
        }
    }
    for field in &form.fields {
        let problem = match values.get(&field.name) {
            None if field.required => Err("is required".to_owned()),
            None => Ok(()),
            Some(value) => check_value(field, value),
        };
        if let Err(message) = problem {
            errors.push(FieldError {
                field: field.name.clone(),
                message,
            });
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// Checks one value against its field; the error is a phrase to show after
/// the field's label.
pub(crate) fn check_value(field: &Field, value: &Value) -> Result<(), String> {
    match &field.kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
            pattern,
        } => {
            let text = value
                .as_str()
                .ok_or_else(|| format!("must be text, not {}", kind_of(value)))?;
            let length = text.chars().count() as u64;
            if let Some(min) = min_length
                && length < *min
            {
                return Err(format!("must be at least {min} character{} long", plural(*min)));
            }
            if let Some(max) = max_length
                && length > *max
            {
                return Err(format!("must be at most {max} character{} long", plural(*max)));
            }
            if let Some(format) = format {
                formats::check(*format, text)?;
            }
            if let Some(pattern) = pattern
                && !pattern.is_match(text)
            {
                return Err(format!("must match the pattern {}", pattern.source()));
            }
            Ok(())
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let number = if *integer {
                whole_number(value).ok_or_else(|| format!("must be a whole number, not {value}"))?
            } else {
                value
                    .as_f64()
                    .ok_or_else(|| format!("must be a number, not {}", kind_of(value)))?
            };
            if let Some(min) = minimum
                && number < *min
            {
                return Err(format!("must be at least {min}"));
            }
            if let Some(max) = maximum
                && number > *max
            {
                return Err(format!("must be at most {max}"));
            }
            Ok(())
        }
        FieldKind::Boolean => match value {
            Value::Bool(_) => Ok(()),
            other => Err(format!("must be true or false, not {}", kind_of(other))),
        },
        FieldKind::Choice { choices } => {
            let chosen = value
                .as_str()
                .ok_or_else(|| format!("must be one choice, not {}", kind_of(value)))?;
            if choices.iter().any(|c| c.value == chosen) {
                Ok(())
            } else {
                Err(format!(
                    "must be one of: {}",
                    list(choices.iter().map(|c| c.label.as_str()))
                ))
            }
        }
        FieldKind::MultiChoice {
            choices,
            min_items,
            max_items,
        } => {
            let items = value
                .as_array()
                .ok_or_else(|| format!("must be a list of choices, not {}", kind_of(value)))?;
            for (i, item) in items.iter().enumerate() {
                let item = item.as_str().filter(|v| choices.iter().any(|c| c.value == *v));
                let Some(item) = item else {
                    return Err(format!(
                        "item {} must be one of: {}",
                        i + 1,
                        list(choices.iter().map(|c| c.label.as_str()))
                    ));
                };
                if items[..i].iter().any(|earlier| earlier == item) {
                    return Err(format!("lists \"{item}\" twice"));
                }
            }
            let count = items.len() as u64;
            if let Some(min) = min_items
                && count < *min
            {
                return Err(format!("needs at least {min} choice{}", plural(*min)));
            }
            if let Some(max) = max_items
                && count > *max
            {
                return Err(format!("allows at most {max} choice{}", plural(*max)));
            }
            Ok(())
        }
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(", ")
}
