//! Snapshot-style tests of the full-screen interface, field by field: each
//! field kind and state drawn on a `TestBackend`, asserted on the text of
//! the buffer.

mod common;

use common::screen::*;
use common::{show, valid_requests};
use elicit_proto::{ElicitationAction, Error};
use elicit_tui::app::{App, Command};
use elicit_tui::ui::theme::Theme;
use ratatui::crossterm::event::KeyCode;
use serde_json::json;

#[test]
fn every_valid_request_renders_at_80x24_with_every_field_reachable() {
    for (name, params) in valid_requests() {
        let mut app = App::default();
        app.registered();
        app.show(show("1", "srv", "host", &params));
        let first = screen(&app);
        assert!(
            first
                .lines()
                .next()
                .is_some_and(|l| l.contains("srv asks, for host")),
            "{name}: top line\n{first}"
        );
        let message = params["message"].as_str().expect("a message");
        assert!(first.contains(message), "{name}: message\n{first}");
        let fields = params
            .pointer("/requestedSchema/properties")
            .and_then(|p| p.as_object())
            .cloned()
            .unwrap_or_default();
        for (i, (prop, schema)) in fields.iter().enumerate() {
            let label = schema["title"].as_str().unwrap_or(prop);
            let text = screen(&app);
            assert!(
                text.lines().any(|l| l.starts_with(&format!("> {label}"))),
                "{name}: field {i} `{label}` focused and shown\n{text}"
            );
            key(&mut app, KeyCode::Tab);
        }
    }
}

#[test]
fn text_fields_show_typing_cursor_and_required_marker() {
    let mut app = app_with("cowork-contact");
    typed(&mut app, "Jane");
    let (text, mut terminal) = screen_with(&app, 80, 24, Theme::new(true));
    assert!(line_of(&text, "> First Name").contains("First Name *"), "{text}");
    assert!(text.contains("[Jane"), "{text}");
    assert!(text.contains("Fields marked * are required."));
    let cursor = terminal.get_cursor_position().expect("a cursor");
    let row = text.lines().nth(usize::from(cursor.y)).expect("cursor row");
    assert!(row.contains("[Jane"), "the cursor sits on the input: {row}");
    assert_eq!(cursor.x, 4 + 1 + 4, "after the typed text");
    key(&mut app, KeyCode::Left);
    key(&mut app, KeyCode::Backspace);
    assert!(screen(&app).contains("[Jae"));
}

#[test]
fn format_hints_and_errors_show_after_leaving_a_field() {
    let mut app = app_with("cowork-contact");
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Tab);
    typed(&mut app, "jane.example.com");
    let text = screen(&app);
    assert!(
        line_of(&text, "Email Address").contains("(name@example.com)"),
        "{text}"
    );
    assert!(!text.contains("! Email"), "no error while typing\n{text}");
    key(&mut app, KeyCode::Tab);
    let text = screen(&app);
    assert!(
        text.contains("! Email Address must be an email address"),
        "{text}"
    );
}

#[test]
fn numbers_parse_and_complain_in_words() {
    let mut app = app_with("every-kind");
    // name, agree, homepage, birthdate, meeting, count
    for _ in 0..5 {
        key(&mut app, KeyCode::Tab);
    }
    let text = screen(&app);
    assert!(
        line_of(&text, "> count").contains("(whole number, 1-100)"),
        "{text}"
    );
    assert!(text.contains("[42"), "the default is pre-filled\n{text}");
    ctrl(&mut app, 'u');
    key(&mut app, KeyCode::End);
    for _ in 0..2 {
        key(&mut app, KeyCode::Backspace);
    }
    typed(&mut app, "2.5");
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::BackTab);
    let text = screen(&app);
    assert!(text.contains("! count must be a whole number"), "{text}");
    ctrl(&mut app, 'u');
    typed(&mut app, "abc");
    assert!(screen(&app).contains("! count must be a whole number, such as 42"));
}

#[test]
fn dates_show_their_format() {
    let mut app = app_with("every-kind");
    for _ in 0..3 {
        key(&mut app, KeyCode::Tab);
    }
    let text = screen(&app);
    assert!(line_of(&text, "> birthdate").contains("(YYYY-MM-DD)"), "{text}");
    typed(&mut app, "2026-02-30");
    key(&mut app, KeyCode::Tab);
    assert!(screen(&app).contains("! birthdate must be a real date written YYYY-MM-DD"));
}

#[test]
fn checkboxes_toggle_with_space_and_answer_yes_or_no() {
    let mut app = app_with("every-kind");
    key(&mut app, KeyCode::Tab);
    assert!(screen(&app).contains("[ ] (not answered)"));
    key(&mut app, KeyCode::Char(' '));
    assert!(screen(&app).contains("[x] yes"));
    key(&mut app, KeyCode::Char(' '));
    assert!(screen(&app).contains("[ ] no"));
    key(&mut app, KeyCode::Char('y'));
    assert!(screen(&app).contains("[x] yes"));
    key(&mut app, KeyCode::Backspace);
    assert!(screen(&app).contains("[ ] (not answered)"));
}

#[test]
fn single_selects_move_with_the_arrows() {
    let mut app = app_with("every-kind");
    for _ in 0..7 {
        key(&mut app, KeyCode::Tab);
    }
    let text = screen(&app);
    assert!(
        text.contains("(*) Monica  ( ) Rachel  ( ) Joey"),
        "default chosen\n{text}"
    );
    key(&mut app, KeyCode::Right);
    assert!(screen(&app).contains("( ) Monica  (*) Rachel  ( ) Joey"));
    // hero: titled choices show their titles, not their values.
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Char(' '));
    let text = screen(&app);
    assert!(text.contains("(*) Superman  ( ) Wonder Woman"), "{text}");
    assert!(!text.contains("hero-1"));
}

#[test]
fn multi_selects_count_items_and_enforce_limits() {
    let mut app = app_with("every-kind");
    for _ in 0..9 {
        key(&mut app, KeyCode::Tab);
    }
    let text = screen(&app);
    assert!(
        line_of(&text, "> instruments").contains("(pick 1-2, 1 selected)"),
        "{text}"
    );
    assert!(text.contains(">[x] Guitar  [ ] Piano  [ ] Drums"), "{text}");
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::BackTab);
    let text = screen(&app);
    assert!(line_of(&text, "> instruments").contains("3 selected"), "{text}");
    assert!(text.contains("! instruments allows at most 2 choices"), "{text}");
    key(&mut app, KeyCode::Char(' '));
    let text = screen(&app);
    assert!(!text.contains("! instruments"), "fixed\n{text}");
}

#[test]
fn enter_sends_only_a_valid_form_and_shows_every_error_otherwise() {
    let mut app = app_with("cowork-contact");
    assert_eq!(key(&mut app, KeyCode::Enter), None);
    let text = screen(&app);
    assert!(text.contains("! First Name is required"), "{text}");
    assert!(text.contains("3 problems to fix before sending."), "{text}");
    typed(&mut app, "Jane");
    key(&mut app, KeyCode::Tab);
    typed(&mut app, "Smith");
    key(&mut app, KeyCode::Tab);
    typed(&mut app, "jane@example.com");
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Right);
    let sent = key(&mut app, KeyCode::Enter);
    let Some(Command::Answer { form, token, answer }) = sent else {
        panic!("expected an answer, got {sent:?}");
    };
    assert_eq!((form.as_str(), token.as_str()), ("1", "token-1"));
    assert_eq!(answer.action, ElicitationAction::Accept);
    assert_eq!(
        answer.content,
        Some(
            json!({"first_name": "Jane", "last_name": "Smith", "email": "jane@example.com", "role": "Engineering"})
        )
    );
}

#[test]
fn the_daemons_field_errors_show_inline_and_the_form_stays() {
    let mut app = app_with("cowork-contact");
    app.sending("1");
    assert!(screen(&app).contains("Sending the answer to contacts-server"));
    let errors = json!([{"field": "email", "message": "is not deliverable"}]).to_string();
    app.answered("1", &ElicitationAction::Accept, Err(Error::InvalidAnswer(errors)));
    let text = screen(&app);
    assert!(text.contains("! Email Address is not deliverable"), "{text}");
    assert!(
        line_of(&text, "> Email Address").contains('*'),
        "focus moved to it\n{text}"
    );
    assert!(text.contains("elicitd refused the answer"));
    // Editing the field drops the daemon's verdict.
    typed(&mut app, "x@example.com");
    assert!(!screen(&app).contains("not deliverable"));
}
