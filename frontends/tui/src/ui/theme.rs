//! Styles, with and without colour.

use ratatui::style::{Color, Modifier, Style};

/// The styles of every element; without colour (`NO_COLOR`), only bold,
/// reverse and underline are used, and every state also shows as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// A theme; `color` false honours `NO_COLOR`.
    pub fn new(color: bool) -> Self {
        Theme { color }
    }

    /// The theme the environment asks for: no colour when `NO_COLOR` is
    /// set to anything non-empty (no-color.org).
    pub fn from_env() -> Self {
        Theme::new(std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()))
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// The top line naming server and host.
    pub fn title(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// The selected line of the queue.
    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The focused field's label.
    pub fn focused(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Help text and hints.
    pub fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    /// Inline errors.
    pub fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// Warnings (URL mode).
    pub fn warning(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// The host of a URL: what the user must check.
    pub fn host(self) -> Style {
        self.fg(Color::Yellow)
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    /// Key names in the key bar.
    pub fn key(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// The item under a multi select's cursor.
    pub fn cursor_item(self) -> Style {
        Style::new().add_modifier(Modifier::UNDERLINED)
    }

    /// The text of an input.
    pub fn input(self) -> Style {
        self.fg(Color::White)
    }
}
