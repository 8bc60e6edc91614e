//! Panels drawn over the form: help, and the consent to open a URL.

use elicit_form::UrlView;
use elicit_i18n::tr;
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::flow::wrap;
use super::theme::Theme;
use super::url::address;

/// The keys and what they do, in the user's language.
fn keys() -> [(&'static str, String); 12] {
    [
        ("Tab, Down", tr("next field")),
        ("Shift-Tab, Up", tr("previous field")),
        ("Left, Right", tr("move in text; change a choice")),
        ("Space", tr("tick a checkbox or the choice under >")),
        ("y / n", tr("answer a checkbox yes or no")),
        ("Backspace, Del", tr("clear a choice or checkbox")),
        ("Enter", tr("send the answer (URL: open...)")),
        ("Ctrl-D", tr("decline: say no (d outside text)")),
        ("Esc", tr("cancel: dismiss without choosing")),
        ("PgUp, PgDn", tr("switch between waiting forms")),
        ("F1, ?", tr("this help (? outside text)")),
        ("Ctrl-C", tr("quit (q too, when no form shows)")),
    ]
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

/// The list of keys.
pub fn help(frame: &mut Frame<'_>, area: Rect, theme: Theme) {
    let keys = keys();
    let panel = centered(area, 66, keys.len() as u16 + 3);
    let mut lines: Vec<Line<'static>> = keys
        .into_iter()
        .map(|(key, what)| {
            Line::from(vec![
                ratatui::text::Span::styled(format!("{key:<16}"), theme.key()),
                ratatui::text::Span::raw(what),
            ])
        })
        .collect();
    lines.push(Line::styled(tr("Any key closes this help."), theme.dim()));
    frame.render_widget(Clear, panel);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(format!(" {} ", tr("Keys"))),
        ),
        panel,
    );
}

/// "Open this URL?" with the host highlighted once more.
pub fn confirm_open(frame: &mut Frame<'_>, area: Rect, view: &UrlView, theme: Theme) {
    let width = area.width.saturating_sub(4).min(76);
    let inner = usize::from(width.saturating_sub(2));
    let mut lines = vec![Line::raw(tr("Open this address in your browser?"))];
    lines.extend(address(view, inner, "", theme));
    for warning in &view.warnings {
        lines.extend(wrap(&format!("! {warning}."), inner, "", theme.warning()));
    }
    // TRANSLATORS: y is the key to type, as it is.
    lines.push(Line::styled(
        tr("y opens it; any other key goes back."),
        theme.key(),
    ));
    let panel = centered(area, width, lines.len() as u16 + 2);
    frame.render_widget(Clear, panel);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(format!(" {} ", tr("Confirm"))),
        ),
        panel,
    );
}
