//! What an editing key does to the focused field, by its kind of input.

use elicit_form::{FormModel, Input};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// An editing key applied to the focused field.
pub(super) fn edit(model: &mut FormModel, key: KeyEvent) {
    let i = model.focus();
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let kind = model.field(i).map(|f| f.input().clone());
    match key.code {
        KeyCode::Tab | KeyCode::Down => model.focus_next(),
        KeyCode::BackTab | KeyCode::Up => model.focus_prev(),
        _ => match kind {
            Some(Input::Text(_)) => {
                let _ = model.edit_text(i, |t| match key.code {
                    KeyCode::Left => t.left(),
                    KeyCode::Right => t.right(),
                    KeyCode::Home => t.home(),
                    KeyCode::End => t.end(),
                    KeyCode::Char('a') if ctrl => t.home(),
                    KeyCode::Char('e') if ctrl => t.end(),
                    KeyCode::Char('u') if ctrl => t.kill_to_start(),
                    KeyCode::Backspace => t.backspace(),
                    KeyCode::Delete => t.delete(),
                    KeyCode::Char(c) if !ctrl => t.insert(c),
                    _ => {}
                });
            }
            Some(Input::Toggle(_)) => match key.code {
                KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right => {
                    model.toggle(i);
                }
                KeyCode::Char('y') => {
                    model.set_toggle(i, Some(true));
                }
                KeyCode::Char('n') => {
                    model.set_toggle(i, Some(false));
                }
                KeyCode::Backspace | KeyCode::Delete => {
                    model.clear(i);
                }
                _ => {}
            },
            Some(Input::Choice(_)) => match key.code {
                KeyCode::Right | KeyCode::Char(' ') => {
                    model.step_choice(i, 1);
                }
                KeyCode::Left => {
                    model.step_choice(i, -1);
                }
                KeyCode::Backspace | KeyCode::Delete => {
                    model.clear(i);
                }
                _ => {}
            },
            Some(Input::Multi(_)) => match key.code {
                KeyCode::Right => {
                    model.move_item_cursor(i, 1);
                }
                KeyCode::Left => {
                    model.move_item_cursor(i, -1);
                }
                KeyCode::Char(' ') => {
                    model.toggle_item_at_cursor(i);
                }
                KeyCode::Backspace | KeyCode::Delete => {
                    model.clear(i);
                }
                _ => {}
            },
            None => {}
        },
    }
}
