//! Snapshot-style tests of the full-screen interface as a whole: answering,
//! declining and cancelling, help, URL consent, several forms.

mod common;

use common::screen::*;
use common::{request, show};
use elicit_proto::ElicitationAction;
use elicit_tui::app::{App, Command, Overlay};
use elicit_tui::ui::theme::Theme;
use ratatui::crossterm::event::KeyCode;
use ratatui::style::Color;
use serde_json::json;

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
