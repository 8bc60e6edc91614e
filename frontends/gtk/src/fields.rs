//! The fields of a form as native GTK widgets: entries, spin buttons,
//! check buttons, radio buttons, drop-downs, each under a label whose
//! mnemonic (Alt+letter) focuses it, with the description as help text
//! and an inline error line fed by the form model.

use std::rc::Rc;

use elicit_form::{FieldState, FormModel, Input};
use elicit_i18n::tr;
use elicit_proto::{Field, FieldKind, TextFormat};
use gtk::prelude::*;
use gtk::{AccessibleInvalidState, AccessibleState, accessible, glib};

pub use crate::mnemonics::Mnemonics;

/// What a call of the [`Editor`] does to the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The user changed a value.
    Value,
    /// The keyboard focus moved to a field (its neighbour may now show
    /// its error).
    Focus,
}

/// Applies one change to the shown form's model, then refreshes the
/// errors. The window provides it; fields never hold the model themselves.
pub type Editor = Rc<dyn Fn(Change, &mut dyn FnMut(&mut FormModel))>;

/// The widgets of one field.
struct FieldWidgets {
    /// What gets the keyboard focus when the field is in error.
    focus: gtk::Widget,
    /// The inline error line.
    error: gtk::Label,
    /// A spin button commits typed text only on activate or focus-out:
    /// it is committed before a submit.
    spin: Option<gtk::SpinButton>,
}

/// Every field of a form, built once per shown form.
pub struct FieldsView {
    root: gtk::Box,
    fields: Vec<FieldWidgets>,
}

impl FieldsView {
    /// Widgets for every field of `model`, filled with its current input
    /// (the defaults); edits go through `editor`.
    pub fn build(model: &FormModel, mnemonics: &mut Mnemonics, editor: &Editor) -> FieldsView {
        let root = gtk::Box::new(gtk::Orientation::Vertical, 14);
        let fields = model
            .fields()
            .iter()
            .enumerate()
            .map(|(index, state)| {
                let (row, widgets) = build_field(index, state, mnemonics, editor);
                root.append(&row);
                widgets
            })
            .collect();
        let view = FieldsView { root, fields };
        view.refresh(model);
        view
    }

    /// The box holding every field.
    pub fn widget(&self) -> &gtk::Box {
        &self.root
    }

    /// Shows the errors the model wants shown now, and marks their inputs
    /// invalid for assistive technologies.
    pub fn refresh(&self, model: &FormModel) {
        for (index, widgets) in self.fields.iter().enumerate() {
            let shown = model.visible_error(index).and_then(|message| {
                let label = &model.field(index)?.field().label;
                Some(format!("{label} {message}"))
            });
            match shown {
                Some(text) => {
                    widgets.error.set_text(&text);
                    widgets.error.set_visible(true);
                    widgets
                        .focus
                        .update_state(&[accessible::State::Invalid(AccessibleInvalidState::True)]);
                }
                None => {
                    widgets.error.set_text("");
                    widgets.error.set_visible(false);
                    widgets.focus.reset_state(AccessibleState::Invalid);
                }
            }
        }
    }

    /// Commits text typed into spin buttons, so that the model has it.
    pub fn commit_pending(&self) {
        for spin in self.fields.iter().filter_map(|f| f.spin.as_ref()) {
            spin.update();
        }
    }

    /// Moves the keyboard focus to field `index`.
    pub fn focus(&self, index: usize) {
        if let Some(widgets) = self.fields.get(index) {
            widgets.focus.grab_focus();
        }
    }
}

/// The caption of a field: its label, `*` when required.
fn caption(field: &Field) -> String {
    if field.required {
        format!("{} *", field.label)
    } else {
        field.label.clone()
    }
}

/// Names the first choice of a group of check or radio buttons, which the
/// field's label focuses, "CHOICE FIELD" ("Family Group *"). The label's
/// mnemonic makes it `labelled-by` the field's label: GTK 4.8 names the
/// button with both, GTK 4.18 (Debian 13) with the field's label alone,
/// and a screen reader would not say which choice it is on.
fn name_first_choice(widget: &gtk::Widget, field: &Field) {
    let Some(button) = widget.downcast_ref::<gtk::CheckButton>() else {
        return;
    };
    let choice = button.label().unwrap_or_default();
    button.reset_relation(gtk::AccessibleRelation::LabelledBy);
    button.update_property(&[accessible::Property::Label(&format!(
        "{choice} {}",
        caption(field)
    ))]);
}

/// Builds one field: its label, input, help and error lines.
fn build_field(
    index: usize,
    state: &FieldState,
    mnemonics: &mut Mnemonics,
    editor: &Editor,
) -> (gtk::Box, FieldWidgets) {
    let field = state.field();
    let row = gtk::Box::new(gtk::Orientation::Vertical, 4);
    let label = gtk::Label::with_mnemonic(&mnemonics.label(&caption(field)));
    label.set_xalign(0.0);
    label.set_wrap(true);
    let mut spin = None;
    let focus: gtk::Widget = match (&field.kind, state.input()) {
        (FieldKind::Boolean, Input::Toggle(value)) => {
            // The check button carries the label itself.
            let check = gtk::CheckButton::with_mnemonic(&label.label());
            // GTK 4.8 names a mnemonic check button with its underscore.
            check.update_property(&[accessible::Property::Label(&caption(field))]);
            check.set_active(value.unwrap_or(false));
            // "Not answered yet" is neither ticked nor unticked.
            check.set_inconsistent(value.is_none());
            let edit = editor.clone();
            check.connect_toggled(move |check| {
                check.set_inconsistent(false);
                let on = check.is_active();
                edit(Change::Value, &mut |model| {
                    model.set_toggle(index, Some(on));
                });
            });
            row.append(&check);
            check.upcast()
        }
        (FieldKind::Choice { choices }, Input::Choice(chosen)) => {
            row.append(&label);
            let labels: Vec<&str> = choices.iter().map(|c| c.label.as_str()).collect();
            let widget = if labels.len() <= 5 {
                radios(index, &labels, *chosen, field.required, editor, &row)
            } else {
                drop_down(index, &labels, *chosen, field.required, editor, &row)
            };
            label.set_mnemonic_widget(Some(&widget));
            name_first_choice(&widget, field);
            widget
        }
        (FieldKind::MultiChoice { choices, .. }, Input::Multi(multi)) => {
            row.append(&label);
            let group = gtk::Box::new(gtk::Orientation::Vertical, 2);
            let mut first = None;
            for (item, choice) in choices.iter().enumerate() {
                let check = gtk::CheckButton::with_label(&choice.label);
                check.set_active(multi.selected.get(item).copied().unwrap_or(false));
                let edit = editor.clone();
                check.connect_toggled(move |check| {
                    let on = check.is_active();
                    edit(Change::Value, &mut |model| {
                        let selected = match model.field(index).map(FieldState::input) {
                            Some(Input::Multi(multi)) => multi.selected.get(item).copied(),
                            _ => None,
                        };
                        if selected.is_some_and(|s| s != on) {
                            model.toggle_item(index, item);
                        }
                    });
                });
                group.append(&check);
                first.get_or_insert(check);
            }
            row.append(&group);
            let widget: gtk::Widget = first.map_or_else(|| group.clone().upcast(), |c| c.upcast());
            label.set_mnemonic_widget(Some(&widget));
            name_first_choice(&widget, field);
            widget
        }
        (
            FieldKind::Number {
                integer: true,
                minimum: Some(min),
                maximum: Some(max),
            },
            Input::Text(text),
        ) if field.default.is_some() && max - min <= 1e9 => {
            // A bounded whole number with a default: a spin button, which
            // cannot leave the bounds. Without a default it would have to
            // invent a value, so an entry is used instead.
            row.append(&label);
            let button = gtk::SpinButton::with_range(*min, *max, 1.0);
            button.set_digits(0);
            button.set_numeric(true);
            if let Ok(value) = text.text().trim().parse::<f64>() {
                button.set_value(value);
            }
            let edit = editor.clone();
            button.connect_value_changed(move |button| {
                let text = button.value_as_int().to_string();
                edit(Change::Value, &mut |model| {
                    model.set_text(index, &text);
                });
            });
            button.update_property(&[accessible::Property::Required(field.required)]);
            label.set_mnemonic_widget(Some(&button));
            row.append(&button);
            spin = Some(button.clone());
            button.upcast()
        }
        (kind, Input::Text(text)) => {
            row.append(&label);
            let entry = gtk::Entry::new();
            entry.set_text(text.text());
            entry.set_activates_default(true);
            configure_entry(&entry, kind);
            let edit = editor.clone();
            entry.connect_changed(move |entry| {
                let text = entry.text();
                edit(Change::Value, &mut |model| {
                    model.set_text(index, &text);
                });
            });
            // The mnemonic label names the entry for assistive technologies.
            entry.update_property(&[accessible::Property::Required(field.required)]);
            label.set_mnemonic_widget(Some(&entry));
            if matches!(
                kind,
                FieldKind::Text {
                    format: Some(TextFormat::Date),
                    ..
                }
            ) {
                row.append(&with_calendar(&entry));
            } else {
                row.append(&entry);
            }
            entry.upcast()
        }
        // The model makes the input from the kind: they always match.
        _ => {
            row.append(&label);
            label.clone().upcast()
        }
    };
    // A format's example is already the entry's placeholder.
    let placeholder = placeholder(&field.kind);
    let hint = state.hint().filter(|hint| Some(hint.as_str()) != placeholder);
    let help: Vec<String> = field.help.iter().cloned().chain(hint).collect();
    if !help.is_empty() {
        let text = help.join(" — ");
        let help_label = gtk::Label::new(Some(&text));
        help_label.set_xalign(0.0);
        help_label.set_wrap(true);
        help_label.add_css_class("dim-label");
        row.append(&help_label);
        focus.update_property(&[accessible::Property::Description(&text)]);
    }
    let error = gtk::Label::new(None);
    error.set_xalign(0.0);
    error.set_wrap(true);
    error.add_css_class("error");
    error.set_visible(false);
    row.append(&error);
    focus.update_relation(&[accessible::Relation::DescribedBy(&[error.upcast_ref()])]);
    // Leaving a field after editing it is when its error may show.
    // A mnemonic activates a check or radio button; it focuses it too, so
    // that the keyboard goes on from there.
    if let Some(check) = focus.downcast_ref::<gtk::CheckButton>() {
        check.connect_mnemonic_activate(|check, _| {
            check.grab_focus();
            glib::Propagation::Proceed
        });
    }
    let tracker = gtk::EventControllerFocus::new();
    let edit = editor.clone();
    tracker.connect_enter(move |_| {
        edit(Change::Focus, &mut |model| model.set_focus(index));
    });
    row.add_controller(tracker);
    (row, FieldWidgets { focus, error, spin })
}

/// Input purpose (for on-screen keyboards and input methods) and
/// placeholder of a text or number entry.
fn configure_entry(entry: &gtk::Entry, kind: &FieldKind) {
    let purpose = match kind {
        FieldKind::Text {
            format: Some(TextFormat::Email),
            ..
        } => gtk::InputPurpose::Email,
        FieldKind::Text {
            format: Some(TextFormat::Uri),
            ..
        } => gtk::InputPurpose::Url,
        FieldKind::Number { integer: true, .. } => gtk::InputPurpose::Digits,
        FieldKind::Number { .. } => gtk::InputPurpose::Number,
        _ => gtk::InputPurpose::FreeForm,
    };
    entry.set_input_purpose(purpose);
    entry.set_placeholder_text(placeholder(kind));
}

/// The example shown in an empty entry: the format's (`YYYY-MM-DD`…).
fn placeholder(kind: &FieldKind) -> Option<&'static str> {
    match kind {
        FieldKind::Text {
            format: Some(format), ..
        } => Some(format.hint()),
        _ => None,
    }
}

/// A date entry with a button that picks the date from a calendar.
fn with_calendar(entry: &gtk::Entry) -> gtk::Box {
    let line = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    entry.set_hexpand(true);
    line.append(entry);
    let calendar = gtk::Calendar::new();
    let popover = gtk::Popover::new();
    popover.set_child(Some(&calendar));
    let button = gtk::MenuButton::new();
    button.set_icon_name("x-office-calendar-symbolic");
    let pick = tr("Pick a date");
    button.set_tooltip_text(Some(&pick));
    button.update_property(&[accessible::Property::Label(&pick)]);
    button.set_popover(Some(&popover));
    let target = entry.clone();
    calendar.connect_day_selected(move |calendar| {
        if let Ok(date) = calendar.date().format("%Y-%m-%d") {
            target.set_text(&date);
        }
        popover.popdown();
    });
    line.append(&button);
    line
}

/// A single choice as radio buttons; an optional one gets "No answer".
/// Returns the widget the label's mnemonic focuses.
fn radios(
    index: usize,
    labels: &[&str],
    chosen: Option<usize>,
    required: bool,
    editor: &Editor,
    row: &gtk::Box,
) -> gtk::Widget {
    let group = gtk::Box::new(gtk::Orientation::Vertical, 2);
    let mut first: Option<gtk::CheckButton> = None;
    let no_answer = tr("No answer");
    let options = labels
        .iter()
        .enumerate()
        .map(|(i, label)| (Some(i), *label))
        .chain((!required).then_some((None, no_answer.as_str())));
    for (choice, label) in options {
        let radio = gtk::CheckButton::with_label(label);
        if let Some(first) = &first {
            radio.set_group(Some(first));
        }
        radio.set_active(chosen == choice && (choice.is_some() || !required));
        let edit = editor.clone();
        radio.connect_toggled(move |radio| {
            if radio.is_active() {
                edit(Change::Value, &mut |model| {
                    model.select(index, choice);
                });
            }
        });
        group.append(&radio);
        first.get_or_insert(radio);
    }
    row.append(&group);
    first.map_or_else(|| group.upcast(), |r| r.upcast())
}

/// A single choice with many options as a drop-down; an optional one
/// starts with "No answer".
fn drop_down(
    index: usize,
    labels: &[&str],
    chosen: Option<usize>,
    required: bool,
    editor: &Editor,
    row: &gtk::Box,
) -> gtk::Widget {
    let offset = u32::from(!required);
    let mut items: Vec<&str> = Vec::with_capacity(labels.len() + 1);
    let no_answer = tr("No answer");
    if !required {
        items.push(&no_answer);
    }
    items.extend_from_slice(labels);
    let list = gtk::DropDown::from_strings(&items);
    let position = match chosen {
        Some(i) => u32::try_from(i).map_or(gtk::INVALID_LIST_POSITION, |i| i + offset),
        None if required => gtk::INVALID_LIST_POSITION,
        None => 0,
    };
    list.set_selected(position);
    let edit = editor.clone();
    list.connect_selected_notify(move |list| {
        let selected = list.selected();
        let choice = (selected != gtk::INVALID_LIST_POSITION && selected >= offset)
            .then(|| (selected - offset) as usize);
        edit(Change::Value, &mut |model| {
            model.select(index, choice);
        });
    });
    row.append(&list);
    list.upcast()
}
