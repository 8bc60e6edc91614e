//! Drawing the full-screen interface on a `TestBackend` and driving it
//! with keys, for the screen tests.

use elicit_tui::app::{App, Command};
use elicit_tui::ui::{draw, theme::Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{request, show};

pub const NOW: u64 = 1_125_000;

pub fn screen_with(app: &App, width: u16, height: u16, theme: Theme) -> (String, Terminal<TestBackend>) {
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

pub fn screen(app: &App) -> String {
    screen_with(app, 80, 24, Theme::new(true)).0
}

pub fn key(app: &mut App, code: KeyCode) -> Option<Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ctrl(app: &mut App, c: char) -> Option<Command> {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

pub fn app_with(name: &str) -> App {
    let mut app = App::default();
    app.registered();
    app.show(show("1", "contacts-server", "claude-code", &request(name)));
    app
}

pub fn line_of<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
}
