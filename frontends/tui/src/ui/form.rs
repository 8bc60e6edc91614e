//! The lines of a form: its message, then each field by kind.

use elicit_form::{FieldState, FormModel, Input, MultiInput, TextInput};
use elicit_i18n::tr;
use elicit_proto::FieldKind;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::flow::{flow, wrap};
use super::theme::Theme;

/// Lines to draw, with where the focused field and the text cursor are.
#[derive(Debug, Default)]
pub struct Laid {
    /// Every line of the body.
    pub lines: Vec<Line<'static>>,
    /// First and last line of the focused field.
    pub focus: Option<(usize, usize)>,
    /// Line and column of the text cursor.
    pub cursor: Option<(usize, u16)>,
}

const INDENT: &str = "    ";

/// The lines of a form-mode body.
pub fn form(message: &str, model: &FormModel, width: usize, theme: Theme) -> Laid {
    let mut laid = Laid {
        lines: wrap(message, width, "", Style::new()),
        ..Laid::default()
    };
    laid.lines.push(Line::raw(""));
    if model.is_confirmation() {
        laid.lines.extend(wrap(
            &tr("Nothing to fill in. Enter accepts, d declines, Esc cancels."),
            width,
            "",
            theme.dim(),
        ));
        return laid;
    }
    if model.fields().iter().any(|f| f.field().required) {
        laid.lines
            .push(Line::styled(tr("Fields marked * are required."), theme.dim()));
        laid.lines.push(Line::raw(""));
    }
    for (i, state) in model.fields().iter().enumerate() {
        let focused = i == model.focus();
        let start = laid.lines.len();
        field(&mut laid, state, model.visible_error(i), focused, width, theme);
        if focused {
            laid.focus = Some((start, laid.lines.len().saturating_sub(1)));
        }
        laid.lines.push(Line::raw(""));
    }
    for error in model.form_errors() {
        laid.lines
            .extend(wrap(&format!("! {error}"), width, "", theme.error()));
    }
    laid
}

fn field(
    laid: &mut Laid,
    state: &FieldState,
    error: Option<&str>,
    focused: bool,
    width: usize,
    theme: Theme,
) {
    let f = state.field();
    let marker = if focused { "> " } else { "  " };
    let label_style = if focused { theme.focused() } else { Style::new() };
    let mut heading = vec![
        Span::styled(marker, label_style),
        Span::styled(f.label.clone(), label_style),
    ];
    if f.required {
        heading.push(Span::styled(" *", label_style));
    }
    let mut hint = state.hint();
    if let Input::Multi(multi) = state.input() {
        let count = format!("{} selected", multi.count());
        hint = Some(hint.map_or(count.clone(), |h| format!("{h}, {count}")));
    }
    if let Some(hint) = hint {
        heading.push(Span::styled(format!("  ({hint})"), theme.dim()));
    }
    laid.lines.push(Line::from(heading));
    if let Some(help) = &f.help {
        laid.lines.extend(wrap(help, width, INDENT, theme.dim()));
    }
    match (state.input(), &f.kind) {
        (Input::Text(text), _) => {
            let (line, column) = text_box(text, width, theme);
            if focused {
                laid.cursor = Some((laid.lines.len(), column));
            }
            laid.lines.push(line);
        }
        (Input::Toggle(value), _) => {
            let text = match value {
                Some(true) => format!("[x] {}", tr("yes")),
                Some(false) => format!("[ ] {}", tr("no")),
                None => format!("[ ] {}", tr("(not answered)")),
            };
            laid.lines.push(Line::from(vec![
                Span::raw(INDENT),
                Span::styled(text, theme.input()),
            ]));
        }
        (Input::Choice(chosen), FieldKind::Choice { choices }) => {
            let atoms = choices
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let mark = if *chosen == Some(i) { "(*)" } else { "( )" };
                    (format!("{mark} {}", c.label), theme.input())
                })
                .collect();
            laid.lines.extend(flow(atoms, width, INDENT, "  "));
        }
        (Input::Multi(multi), FieldKind::MultiChoice { choices, .. }) => {
            laid.lines
                .extend(multi_lines(multi, choices, focused, width, theme));
        }
        _ => {}
    }
    if let Some(error) = error {
        let text = format!("! {} {error}", f.label);
        laid.lines.extend(wrap(&text, width, INDENT, theme.error()));
    }
}

fn multi_lines(
    multi: &MultiInput,
    choices: &[elicit_proto::Choice],
    focused: bool,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let atoms = choices
        .iter()
        .zip(&multi.selected)
        .enumerate()
        .map(|(i, (choice, on))| {
            let here = focused && i == multi.cursor;
            let mark = if *on { "[x]" } else { "[ ]" };
            // The cursor shows as ">" too, for terminals without underline.
            let lead = if here { ">" } else { " " };
            let style = if here { theme.cursor_item() } else { theme.input() };
            (format!("{lead}{mark} {}", choice.label), style)
        })
        .collect();
    flow(atoms, width, "   ", " ")
}

/// A text input `[text   ]` scrolled so the cursor shows, and the column
/// of the cursor on that line.
fn text_box(text: &TextInput, width: usize, theme: Theme) -> (Line<'static>, u16) {
    let inner = width.saturating_sub(INDENT.len() + 2).clamp(1, 60);
    let chars: Vec<char> = text.text().chars().collect();
    let start = text.cursor().saturating_sub(inner - 1);
    let shown: String = chars.iter().skip(start).take(inner).collect();
    let pad = inner.saturating_sub(shown.chars().count());
    let line = Line::from(vec![
        Span::raw(INDENT),
        Span::raw("["),
        Span::styled(format!("{shown}{}", " ".repeat(pad)), theme.input()),
        Span::raw("]"),
    ]);
    let column = INDENT.len() + 1 + (text.cursor() - start);
    (line, column as u16)
}
