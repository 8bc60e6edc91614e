//! The `--plain` conversation, driven line by line.

mod common;

use common::{request, show};
use elicit_proto::{ElicitationAction, Error};
use elicit_tui::BusEvent;
use elicit_tui::app::Command;
use elicit_tui::plain::Plain;
use serde_json::json;

fn text(plain: &Plain<Vec<u8>>) -> String {
    String::from_utf8_lossy(plain.output()).into_owned()
}

fn started(name: &str) -> Plain<Vec<u8>> {
    let mut plain = Plain::new(Vec::new());
    plain.on_bus(BusEvent::Registered).expect("writes");
    plain
        .on_bus(BusEvent::Show(Box::new(show(
            "1",
            "contacts",
            "claude-code",
            &request(name),
        ))))
        .expect("writes");
    plain
}

fn line(plain: &mut Plain<Vec<u8>>, input: &str) -> Option<Command> {
    plain.on_line(input).expect("writes")
}

#[test]
fn asks_field_by_field_and_sends_after_review() {
    let mut plain = started("cowork-contact");
    let out = text(&plain);
    assert!(
        out.contains("== contacts asks, for claude-code, in /home/ann/project =="),
        "{out}"
    );
    assert!(out.contains("Field 1 of 4: First Name (required)"), "{out}");
    assert_eq!(line(&mut plain, ""), None);
    assert!(text(&plain).contains("! First Name is required"));
    line(&mut plain, "Jane");
    line(&mut plain, "Smith");
    line(&mut plain, "jane.example.com");
    assert!(text(&plain).contains("! Email Address must be an email address"));
    line(&mut plain, "jane@example.com");
    assert!(text(&plain).contains("  1) Engineering\n  2) Sales\n  3) Support"));
    line(&mut plain, "9");
    assert!(text(&plain).contains("! Not understood"));
    line(&mut plain, "sales");
    let out = text(&plain);
    assert!(
        out.contains("Your answer:\n  First Name: Jane\n  Last Name: Smith"),
        "{out}"
    );
    assert!(
        out.contains("  Role: Sales\nSend it? [y]es, [e]dit, [d]ecline, [c]ancel: "),
        "{out}"
    );
    let Some(Command::Answer { form, token, answer }) = line(&mut plain, "y") else {
        panic!("y sends");
    };
    assert_eq!((form.as_str(), token.as_str()), ("1", "token-1"));
    assert_eq!(
        answer.content,
        Some(
            json!({"first_name": "Jane", "last_name": "Smith", "email": "jane@example.com", "role": "Sales"})
        )
    );
    plain
        .on_answered("1", &ElicitationAction::Accept, Ok(()))
        .expect("writes");
    assert!(text(&plain).contains("Sent to contacts: accepted."));
}

#[test]
fn every_kind_of_field_is_entered_in_words() {
    let mut plain = started("every-kind");
    for entry in [
        "Ann",
        "y",
        "https://example.org/me",
        "1990-02-28",
        "2026-11-29T10:00:00Z",
        "",
        "0.5",
        "3",
        "Wonder Woman",
        "2, 3",
        "1",
    ] {
        line(&mut plain, entry);
    }
    let out = text(&plain);
    assert!(out.contains("count [42]: "), "the default is offered\n{out}");
    assert!(out.contains("Type the numbers, separated by spaces or commas."));
    let Some(Command::Answer { answer, .. }) = line(&mut plain, "y") else {
        panic!("sends\n{}", text(&plain));
    };
    assert_eq!(
        answer.content,
        Some(json!({
            "name": "Ann", "agree": true, "homepage": "https://example.org/me",
            "birthdate": "1990-02-28", "meeting": "2026-11-29T10:00:00Z", "count": 42,
            "ratio": 0.5, "friend": "Joey", "hero": "hero-2",
            "instruments": ["Piano", "Drums"], "fish": ["fish-1"]
        }))
    );
}

#[test]
fn decline_and_cancel_work_at_any_prompt() {
    let mut plain = started("cowork-contact");
    let Some(Command::Answer { answer, .. }) = line(&mut plain, ":d") else {
        panic!(":d declines");
    };
    assert_eq!(answer.action, ElicitationAction::Decline);
    let mut plain = started("cowork-contact");
    line(&mut plain, "Jane");
    let Some(Command::Answer { answer, .. }) = line(&mut plain, ":c") else {
        panic!(":c cancels");
    };
    assert_eq!((answer.action, answer.content), (ElicitationAction::Cancel, None));
    assert_eq!(line(&mut plain, ":q"), Some(Command::Quit));
}

#[test]
fn the_daemons_errors_send_the_user_back_to_the_field() {
    let mut plain = started("cowork-contact");
    for entry in ["Jane", "Smith", "jane@example.com", "", "y"] {
        line(&mut plain, entry);
    }
    let errors = json!([{"field": "last_name", "message": "is taken"}]).to_string();
    plain
        .on_answered("1", &ElicitationAction::Accept, Err(Error::InvalidAnswer(errors)))
        .expect("writes");
    let out = text(&plain);
    assert!(
        out.contains("elicitd refused the answer:\n! `last_name`: is taken"),
        "{out}"
    );
    assert!(out.ends_with("Last Name [Smith]: "), "{out}");
}

#[test]
fn urls_need_an_explicit_yes_and_withdrawals_are_announced() {
    let mut plain = Plain::new(Vec::new());
    let ask = |form: &str, name: &str| BusEvent::Show(Box::new(show(form, "auth", "agent", &request(name))));
    plain.on_bus(ask("1", "url-mode")).expect("writes");
    plain.on_bus(ask("2", "confirm-no-fields")).expect("writes");
    let out = text(&plain);
    assert!(
        out.contains("  https://example.com/oauth/authorize?x=1\n  Host: example.com"),
        "{out}"
    );
    assert!(out.contains("(Another form is waiting, from auth.)"));
    assert_eq!(line(&mut plain, "maybe"), None);
    assert_eq!(
        line(&mut plain, "y"),
        Some(Command::OpenUrl {
            form: "1".into(),
            token: "token-1".into(),
            url: "https://example.com/oauth/authorize?x=1".into()
        })
    );
    plain
        .on_bus(BusEvent::Withdraw {
            form: "1".into(),
            reason: "timeout".into(),
        })
        .expect("writes");
    let out = text(&plain);
    assert!(
        out.contains("The form from auth was withdrawn: timed out."),
        "{out}"
    );
    assert!(
        out.ends_with("Accept? [y]es, [d]ecline, [c]ancel: "),
        "the next form\n{out}"
    );
}

/// A hostile server's name reaches the terminal escaped, never raw: OSC 0
/// (window title), CSI 2J (clear screen), OSC 52 (clipboard), a C1 CSI and
/// a right-to-left override.
#[test]
fn hostile_text_reaches_the_terminal_escaped() {
    let hostile = "evil\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}]52;c;cHduZWQ=\u{7}\u{9b}2J\u{202e}";
    let mut plain = Plain::new(Vec::new());
    plain.on_bus(BusEvent::Registered).expect("writes");
    plain
        .on_bus(BusEvent::Show(Box::new(show(
            "1",
            hostile,
            hostile,
            &request("cowork-contact"),
        ))))
        .expect("writes");
    let out = text(&plain);
    let raw = ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'];
    assert!(
        !out.contains(raw),
        "raw control text reached the terminal: {out:?}"
    );
    assert!(out.contains("evil\\u{1b}]0;owned\\u{7}"), "{out}");
}
