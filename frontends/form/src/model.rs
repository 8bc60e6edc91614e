//! The form model: every field's state, focus, validation and the answer.

use elicit_mcp::{
    Answer, Elicitation, ElicitationAction, FieldError, FieldKind, Form, Limits, Mode, validate_answer,
};
use serde_json::{Map, Value};

use crate::field::{FieldState, Input};
use crate::text::TextInput;

/// A form being filled in.
///
/// Every edit goes through a method that names the field by index, so that
/// the model can re-check the form at once: [`FieldState::error`] is always
/// current, and [`FormModel::visible_error`] says whether to show it yet
/// (errors appear once a field has been edited and left, or after a submit
/// attempt, and not while the user is still typing a first value).
#[derive(Debug, Clone)]
pub struct FormModel {
    /// The form wrapped as a request, because proto's validation takes one.
    request: Elicitation,
    fields: Vec<FieldState>,
    focus: usize,
    submit_attempted: bool,
    /// The daemon's errors on the answer as a whole, or on keys the form
    /// does not have.
    form_errors: Vec<String>,
    /// Validation's error on the answer as a whole (its size).
    whole_error: Option<String>,
    limits: Limits,
}

impl FormModel {
    /// A model of `form`, with its defaults filled in.
    pub fn new(form: Form) -> Self {
        let fields = form.fields.iter().cloned().map(FieldState::new).collect();
        let request = Elicitation {
            message: String::new(),
            mode: Mode::Form(form),
            raw: Value::Null,
        };
        let mut model = FormModel {
            request,
            fields,
            focus: 0,
            submit_attempted: false,
            form_errors: Vec::new(),
            whole_error: None,
            limits: Limits::default(),
        };
        model.revalidate();
        model
    }

    /// A model of a form-mode request; `None` in URL mode.
    pub fn from_request(request: &Elicitation) -> Option<Self> {
        request.form().cloned().map(FormModel::new)
    }

    /// True for a pure confirmation: a form without fields.
    pub fn is_confirmation(&self) -> bool {
        self.fields.is_empty()
    }

    /// Every field, in the server's order.
    pub fn fields(&self) -> &[FieldState] {
        &self.fields
    }

    /// The field at `index`.
    pub fn field(&self, index: usize) -> Option<&FieldState> {
        self.fields.get(index)
    }

    /// The index of the field called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.field.name == name)
    }

    /// The focused field's index (0 in a form without fields).
    pub fn focus(&self) -> usize {
        self.focus
    }

    /// Moves the focus to `index` (ignored when out of range).
    pub fn set_focus(&mut self, index: usize) {
        if index < self.fields.len() && index != self.focus {
            self.leave(self.focus);
            self.focus = index;
        }
    }

    /// Focuses the next field, wrapping around.
    pub fn focus_next(&mut self) {
        if !self.fields.is_empty() {
            self.set_focus((self.focus + 1) % self.fields.len());
        }
    }

    /// Focuses the previous field, wrapping around.
    pub fn focus_prev(&mut self) {
        if !self.fields.is_empty() {
            self.set_focus((self.focus + self.fields.len() - 1) % self.fields.len());
        }
    }

    /// Edits the text of a text or number field; false if it has none.
    pub fn edit_text(&mut self, index: usize, edit: impl FnOnce(&mut TextInput)) -> bool {
        self.edit(index, |field| match &mut field.input {
            Input::Text(text) => {
                edit(text);
                true
            }
            _ => false,
        })
    }

    /// Replaces the text of a text or number field (for toolkits that own
    /// the text entry); false if it has none.
    pub fn set_text(&mut self, index: usize, text: &str) -> bool {
        self.edit_text(index, |t| t.set(text))
    }

    /// Flips a checkbox (an unanswered one becomes true); false if the
    /// field is no checkbox.
    pub fn toggle(&mut self, index: usize) -> bool {
        self.edit(index, |field| match &mut field.input {
            Input::Toggle(value) => {
                *value = Some(!value.unwrap_or(false));
                true
            }
            _ => false,
        })
    }

    /// Sets a checkbox; false if the field is no checkbox.
    pub fn set_toggle(&mut self, index: usize, on: Option<bool>) -> bool {
        self.edit(index, |field| match &mut field.input {
            Input::Toggle(value) => {
                *value = on;
                true
            }
            _ => false,
        })
    }

    /// Chooses choice `choice` (or none) of a single select; false if the
    /// field is no single select or the choice does not exist.
    pub fn select(&mut self, index: usize, choice: Option<usize>) -> bool {
        let count = self.choice_count(index);
        if choice.is_some_and(|c| c >= count) {
            return false;
        }
        self.edit(index, |field| match &mut field.input {
            Input::Choice(chosen) => {
                *chosen = choice;
                true
            }
            _ => false,
        })
    }

    /// Moves a single select's choice by `step` (±1), wrapping; an
    /// optional field passes through "no choice" on the way round.
    pub fn step_choice(&mut self, index: usize, step: isize) -> bool {
        let Some(Input::Choice(chosen)) = self.fields.get(index).map(|f| &f.input) else {
            return false;
        };
        let count = self.choice_count(index);
        let required = self.fields[index].field.required;
        // Positions 0..count are the choices; position `count` is "none"
        // for an optional field.
        let positions = count + usize::from(!required);
        if positions == 0 {
            return false;
        }
        let here = chosen.unwrap_or(count).min(positions - 1);
        let next = (here as isize + step).rem_euclid(positions as isize) as usize;
        self.select(index, (next < count).then_some(next))
    }

    /// Moves a multi select's cursor by `step`, without wrapping; this is no
    /// edit, so it does not touch the field's answer.
    pub fn move_item_cursor(&mut self, index: usize, step: isize) -> bool {
        let Some(FieldState {
            input: Input::Multi(multi),
            ..
        }) = self.fields.get_mut(index)
        else {
            return false;
        };
        let last = multi.selected.len().saturating_sub(1) as isize;
        multi.cursor = (multi.cursor as isize + step).clamp(0, last) as usize;
        true
    }

    /// Flips choice `item` of a multi select; false if there is none.
    pub fn toggle_item(&mut self, index: usize, item: usize) -> bool {
        self.edit(index, |field| match &mut field.input {
            Input::Multi(multi) if item < multi.selected.len() => {
                multi.selected[item] = !multi.selected[item];
                multi.answered = true;
                multi.cursor = item;
                true
            }
            _ => false,
        })
    }

    /// Flips the choice under a multi select's cursor.
    pub fn toggle_item_at_cursor(&mut self, index: usize) -> bool {
        match self.fields.get(index).map(|f| &f.input) {
            Some(Input::Multi(multi)) => self.toggle_item(index, multi.cursor),
            _ => false,
        }
    }

    /// Empties a field, so that it has no answer.
    pub fn clear(&mut self, index: usize) -> bool {
        self.edit(index, |field| {
            field.clear();
            true
        })
    }

    /// Empties every field (defaults included), without marking any as
    /// edited: for a front-end that fills a form from a given answer.
    pub fn clear_all(&mut self) {
        for field in &mut self.fields {
            field.clear();
        }
        self.revalidate();
    }

    /// Enters a JSON value into the field called `name`, as if the user had
    /// typed or picked it. A value the field's input cannot hold (wrong
    /// type, unknown choice, unknown field) is refused: the error is
    /// returned and, for a known field, also shown on it until its next edit.
    pub fn set_value(&mut self, name: &str, value: &Value) -> Result<(), FieldError> {
        let Some(index) = self.index_of(name) else {
            return Err(FieldError {
                field: name.to_owned(),
                message: elicit_i18n::tr("was not asked for"),
            });
        };
        if self.edit(index, |field| field.load(value).is_ok()) {
            return Ok(());
        }
        let message = self
            .check_alone(name, value)
            .unwrap_or_else(|| elicit_i18n::tr("cannot be entered in this form"));
        let field = &mut self.fields[index];
        field.clear();
        field.rejected = Some(message.clone());
        field.touched = true;
        self.revalidate();
        Err(FieldError {
            field: name.to_owned(),
            message,
        })
    }

    /// The content to send: every field that has a value that parses.
    pub fn content(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|f| Some((f.field.name.clone(), f.value().ok()??)))
            .collect()
    }

    /// Every current error (shown or not), the form-wide ones with the
    /// field `""`.
    pub fn errors(&self) -> Vec<FieldError> {
        let form_wide = self.form_errors().into_iter().map(|message| FieldError {
            field: String::new(),
            message,
        });
        let per_field = self.fields.iter().filter_map(|f| {
            Some(FieldError {
                field: f.field.name.clone(),
                message: f.error()?.to_owned(),
            })
        });
        form_wide.chain(per_field).collect()
    }

    /// Errors on the answer as a whole: the daemon's, and the size limit.
    pub fn form_errors(&self) -> Vec<String> {
        self.form_errors
            .iter()
            .cloned()
            .chain(self.whole_error.clone())
            .collect()
    }

    /// The error to show on field `index` now, if any.
    pub fn visible_error(&self, index: usize) -> Option<&str> {
        let field = self.fields.get(index)?;
        if field.rejected.is_some() || field.server_error.is_some() || field.touched || self.submit_attempted
        {
            field.error()
        } else {
            None
        }
    }

    /// True when the form can be submitted: no field has an error.
    pub fn is_valid(&self) -> bool {
        self.form_errors.is_empty()
            && self.whole_error.is_none()
            && self.fields.iter().all(|f| f.error().is_none())
    }

    /// Whether the user has tried to submit (every error is then shown).
    pub fn submit_attempted(&self) -> bool {
        self.submit_attempted
    }

    /// The accept answer, when the form is valid. Otherwise every error is
    /// returned and from now on shown, and the focus moves to the first
    /// field in error.
    pub fn submit(&mut self) -> Result<Answer, Vec<FieldError>> {
        self.submit_attempted = true;
        if self.is_valid() {
            return Ok(Answer {
                action: ElicitationAction::Accept,
                content: Some(Value::Object(self.content())),
            });
        }
        if let Some(first) = self.fields.iter().position(|f| f.error().is_some()) {
            self.set_focus(first);
        }
        Err(self.errors())
    }

    /// The decline answer: the user read the form and said no.
    pub fn decline() -> Answer {
        Answer::bare(ElicitationAction::Decline)
    }

    /// The cancel answer: the user dismissed the form without choosing.
    pub fn cancel() -> Answer {
        Answer::bare(ElicitationAction::Cancel)
    }

    /// Merges the daemon's verdict on the last submitted answer: each
    /// error goes to its field (and stays until that field is edited);
    /// errors on the whole answer or on unknown keys are kept form-wide.
    pub fn apply_server_errors(&mut self, errors: &[FieldError]) {
        self.form_errors.clear();
        for error in errors {
            match self.index_of(&error.field) {
                Some(index) if !error.field.is_empty() => {
                    self.fields[index].server_error = Some(error.message.clone());
                }
                _ => self.form_errors.push(error.to_string()),
            }
        }
        self.submit_attempted = true;
        if let Some(first) = self.fields.iter().position(|f| f.server_error.is_some()) {
            self.set_focus(first);
        }
    }

    /// Marks field `index` as left after an edit, so its error may show.
    fn leave(&mut self, index: usize) {
        if let Some(field) = self.fields.get_mut(index)
            && field.edited
        {
            field.touched = true;
        }
    }

    /// Runs `edit` on field `index`'s input; on success the field counts as
    /// edited, earlier verdicts on it are dropped and the form is re-checked.
    fn edit(&mut self, index: usize, edit: impl FnOnce(&mut FieldState) -> bool) -> bool {
        let Some(field) = self.fields.get_mut(index) else {
            return false;
        };
        if !edit(field) {
            return false;
        }
        field.edited = true;
        field.rejected = None;
        field.server_error = None;
        // A form-wide complaint was about the answer as it was.
        self.form_errors.clear();
        self.revalidate();
        true
    }

    fn choice_count(&self, index: usize) -> usize {
        match self.fields.get(index).map(|f| &f.field.kind) {
            Some(FieldKind::Choice { choices }) | Some(FieldKind::MultiChoice { choices, .. }) => {
                choices.len()
            }
            _ => 0,
        }
    }

    /// Re-checks every field with proto's validation, the daemon's own
    /// rules, so that the two never disagree.
    fn revalidate(&mut self) {
        let mut content = Map::new();
        for field in &mut self.fields {
            match field.value() {
                Ok(Some(value)) => {
                    content.insert(field.field.name.clone(), value);
                    field.error = None;
                }
                Ok(None) => field.error = None,
                Err(message) => field.error = Some(message),
            }
        }
        let answer = Answer {
            action: ElicitationAction::Accept,
            content: Some(Value::Object(content)),
        };
        self.whole_error = None;
        let Err(errors) = validate_answer(&self.request, &answer, &self.limits) else {
            return;
        };
        for error in errors {
            let target = self.fields.iter_mut().find(|f| f.field.name == error.field);
            match target {
                // A field whose text did not parse was left out of the
                // content: keep the parse error, not "is required".
                Some(field) if field.error.is_none() => field.error = Some(error.message),
                Some(_) => {}
                // Only the size limit names no field: a model cannot send
                // keys it does not have.
                None => self.whole_error = Some(error.message),
            }
        }
    }

    /// What validation says about `value` as the only value of `name`.
    fn check_alone(&self, name: &str, value: &Value) -> Option<String> {
        let mut content = Map::new();
        content.insert(name.to_owned(), value.clone());
        let answer = Answer {
            action: ElicitationAction::Accept,
            content: Some(Value::Object(content)),
        };
        validate_answer(&self.request, &answer, &self.limits)
            .err()?
            .into_iter()
            .find(|e| e.field == name)
            .map(|e| e.message)
    }
}
