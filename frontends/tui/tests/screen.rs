//! Snapshot-style tests of the full-screen interface: each field kind and
//! state drawn on a `TestBackend`, asserted on the text of the buffer.

mod common;

use common::{request, show, valid_requests};
use elicit_proto::{ElicitationAction, Error};
use elicit_tui::app::{App, Command, Overlay};
use elicit_tui::ui::{draw, theme::Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use serde_json::json;

const NOW: u64 = 1_125_000;

fn screen_with(app: &App, width: u16, height: u16, theme: Theme) -> (String, Terminal<TestBackend>) {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|frame| draw(frame, app, theme, NOW))
        .expect("drawing never fails on a test backend");
    let buffer = terminal.backend().buffer().clone();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    (text, terminal)
}

fn screen(app: &App) -> String {
    screen_with(app, 80, 24, Theme::new(true)).0
}

fn key(app: &mut App, code: KeyCode) -> Option<Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(app: &mut App, c: char) -> Option<Command> {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn app_with(name: &str) -> App {
    let mut app = App::default();
    app.registered();
    app.show(show("1", "contacts-server", "claude-code", &request(name)));
    app
}

fn line_of<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
}

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

#[test]
fn escape_cancels_and_ctrl_d_declines() {
    let mut app = app_with("cowork-contact");
    let Some(Command::Answer { answer, .. }) = key(&mut app, KeyCode::Esc) else {
        panic!("Esc answers");
    };
    assert_eq!((answer.action, answer.content), (ElicitationAction::Cancel, None));
    let Some(Command::Answer { answer, .. }) = ctrl(&mut app, 'd') else {
        panic!("Ctrl-D answers");
    };
    assert_eq!(answer.action, ElicitationAction::Decline);
    let text = screen(&app);
    for keys in [
        "Enter send",
        "Esc cancel",
        "^D decline",
        "Tab next",
        "Space toggle",
        "F1 help",
    ] {
        let bar = text.lines().last().expect("a key bar");
        assert!(bar.contains(keys), "key bar shows {keys}\n{text}");
    }
}

#[test]
fn confirmations_accept_with_enter_and_decline_with_d() {
    let mut app = app_with("confirm-no-fields");
    let text = screen(&app);
    assert!(text.contains("Delete all 47 contacts?"));
    assert!(text.contains("Enter accept"), "{text}");
    let Some(Command::Answer { answer, .. }) = key(&mut app, KeyCode::Char('d')) else {
        panic!("d declines");
    };
    assert_eq!(answer.action, ElicitationAction::Decline);
    let Some(Command::Answer { answer, .. }) = key(&mut app, KeyCode::Enter) else {
        panic!("Enter accepts");
    };
    assert_eq!(
        (answer.action, answer.content),
        (ElicitationAction::Accept, Some(json!({})))
    );
}

#[test]
fn help_opens_with_question_mark_outside_text_and_closes_with_any_key() {
    let mut app = app_with("every-kind");
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(app.overlay, Overlay::None, "? is typed into a text field");
    assert!(screen(&app).contains("[?"));
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Char('?'));
    let text = screen(&app);
    assert!(
        text.contains("Keys") && text.contains("Shift-Tab, Up") && text.contains("decline"),
        "{text}"
    );
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(app.overlay, Overlay::None);
    key(&mut app, KeyCode::F(1));
    assert_eq!(app.overlay, Overlay::Help);
}

#[test]
fn url_mode_highlights_the_host_and_opens_only_after_yes() {
    let mut app = app_with("url-mode");
    let (text, terminal) = screen_with(&app, 80, 24, Theme::new(true));
    assert!(text.contains("https://example.com/oauth/authorize?x=1"), "{text}");
    assert!(text.contains("Host: example.com"));
    assert!(text.contains("Nothing has been opened."));
    // The host is drawn in the highlight style, the rest is not.
    let buffer = terminal.backend().buffer();
    let (y, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("https://example.com/oauth"))
        .expect("the URL line");
    let x = line.find("example.com").expect("host") as u16;
    assert_eq!(buffer[(x, y as u16)].fg, Color::Yellow);
    assert_ne!(buffer[(x - 1, y as u16)].fg, Color::Yellow);
    assert_eq!(key(&mut app, KeyCode::Enter), None);
    let text = screen(&app);
    assert!(text.contains("Open this address in your browser?"), "{text}");
    assert_eq!(
        key(&mut app, KeyCode::Char('n')),
        None,
        "anything but y goes back"
    );
    assert_eq!(app.overlay, Overlay::None);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        key(&mut app, KeyCode::Char('y')),
        Some(Command::OpenUrl {
            form: "1".into(),
            token: "token-1".into(),
            url: "https://example.com/oauth/authorize?x=1".into()
        })
    );
}

#[test]
fn url_mode_warns_of_punycode_and_mixed_scripts() {
    let mut app = App::default();
    let request = json!({"mode": "url", "message": "Log in", "url": "https://p\u{0430}ypal.com/login"});
    app.show(show("1", "srv", "host", &request));
    let text = screen(&app);
    assert!(text.contains("Host: xn--"), "{text}");
    assert!(
        text.contains("! Warning: the host is an international name"),
        "{text}"
    );
    assert!(text.contains("mixes Latin and Cyrillic letters"), "{text}");
}

#[test]
fn the_queue_lists_sessions_and_pgdn_switches() {
    let mut app = app_with("cowork-contact");
    app.show(show(
        "2",
        "tracker",
        "cursor",
        &request("tracking-pattern-enumnames"),
    ));
    let text = screen(&app);
    assert!(text.contains("Waiting: 2 forms (PgUp/PgDn to switch)"), "{text}");
    let first = line_of(&text, "1. contacts-server");
    assert!(first.starts_with("> "), "{first}");
    assert!(
        first.contains("for claude-code in /home/ann/project, waiting 2m05s"),
        "{first}"
    );
    assert!(text.contains("2. tracker for cursor"));
    assert!(text.lines().next().is_some_and(|l| l.contains("[form 1 of 2]")));
    key(&mut app, KeyCode::PageDown);
    let text = screen(&app);
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains("tracker asks, for cursor")),
        "{text}"
    );
    assert!(text.contains("Which package?"));
}

#[test]
fn long_queue_lines_shorten_the_directory_and_keep_the_deadline() {
    let mut app = App::default();
    let mut long = show("1", "a-server", "an-agent", &request("confirm-no-fields"));
    long.origin.cwd = Some("/home/ann/src/very/deeply/nested/projects/elicitd-checkout".into());
    long.deadline_ms = NOW + 90_000;
    app.show(long);
    let text = screen(&app);
    let line = line_of(&text, "1. a-server");
    assert!(line.contains(" in ...") && line.contains("-checkout,"), "{line}");
    assert!(line.trim_end().ends_with("times out in 1m30s"), "{line}");
}

#[test]
fn the_queue_counts_forms_waiting_behind_each_session() {
    let mut app = app_with("confirm-no-fields");
    app.backlog.insert("session-1".into(), 2);
    let text = screen(&app);
    assert!(
        line_of(&text, "1. contacts-server").contains(", 2 more queued"),
        "{text}"
    );
}

#[test]
fn a_withdrawn_form_disappears_with_a_line_saying_why() {
    let mut app = app_with("cowork-contact");
    app.show(show(
        "2",
        "tracker",
        "cursor",
        &request("tracking-pattern-enumnames"),
    ));
    app.withdraw("1", "cancelled");
    let text = screen(&app);
    assert!(text.contains("The form from contacts-server was withdrawn: cancelled by the server."));
    assert!(!text.contains("Enter the new contact's details."));
    assert!(text.contains("Which package?"));
    assert_eq!(
        key(&mut app, KeyCode::Char('q')),
        None,
        "q is no quit key while a form shows"
    );
    app.withdraw("2", "client-gone");
    let text = screen(&app);
    assert!(text.contains("withdrawn: the client went away."), "{text}");
    assert!(text.contains("no forms waiting"));
    assert!(
        text.lines().last().is_some_and(|l| l.contains("q quit")),
        "{text}"
    );
    assert_eq!(key(&mut app, KeyCode::Char('q')), Some(Command::Quit));
}

#[test]
fn no_color_uses_no_colour_at_all() {
    let mut app = app_with("every-kind");
    key(&mut app, KeyCode::Enter);
    let (_, terminal) = screen_with(&app, 80, 24, Theme::new(false));
    let buffer = terminal.backend().buffer();
    for cell in buffer.content() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
    let (text, _) = screen_with(&app, 80, 24, Theme::new(false));
    assert!(text.contains("! Name is required"), "errors read as text\n{text}");
}

#[test]
fn resizing_redraws_at_every_size() {
    let mut app = app_with("every-kind");
    for (w, h) in [(80, 24), (120, 40), (50, 12), (40, 10), (200, 60)] {
        let (text, _) = screen_with(&app, w, h, Theme::new(true));
        assert!(
            text.contains("srv") || text.contains("contacts-server asks"),
            "{w}x{h}\n{text}"
        );
        key(&mut app, KeyCode::Tab);
    }
    let (text, _) = screen_with(&app, 30, 8, Theme::new(true));
    assert!(text.contains("enlarge"), "{text}");
}

#[test]
fn a_sent_notice_never_shows_under_another_servers_form() {
    let mut app = app_with("confirm-no-fields");
    app.show(show(
        "2",
        "tracker",
        "cursor",
        &request("tracking-pattern-enumnames"),
    ));
    app.answered("1", &ElicitationAction::Accept, Ok(()));
    let text = screen(&app);
    assert!(text.contains("Which package?"), "{text}");
    assert!(
        !text.contains("Sent to contacts-server"),
        "the outcome of contacts-server's form is not tracker's: {text}"
    );
    // With no form left, it says what was sent.
    app.answered("2", &ElicitationAction::Decline, Ok(()));
    let text = screen(&app);
    assert!(text.contains("Sent to tracker: declined."), "{text}");
}
