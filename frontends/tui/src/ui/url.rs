//! The lines of a URL-mode body: the address with its host highlighted.

use elicit_form::UrlView;
use elicit_i18n::{fill, tr};
use ratatui::style::Style;
use ratatui::text::Line;

use super::flow::{chars, flow, wrap};
use super::theme::Theme;

/// The lines of a URL-mode body.
pub fn url(message: &str, view: &UrlView, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = wrap(message, width, "", Style::new());
    lines.push(Line::raw(""));
    lines.push(Line::raw(tr("The server asks you to open this address:")));
    lines.extend(address(view, width, "  ", theme));
    lines.push(Line::from(vec![
        ratatui::text::Span::raw(format!("  {} ", tr("Host:"))),
        ratatui::text::Span::styled(view.host.clone(), theme.host()),
    ]));
    if let Some(unicode) = &view.unicode_host {
        lines.extend(wrap(
            &fill(&tr("(reads as {name})"), &[("name", unicode)]),
            width,
            "        ",
            theme.dim(),
        ));
    }
    for warning in &view.warnings {
        lines.extend(wrap(
            &format!("! {}", fill(&tr("Warning: {warning}."), &[("warning", warning)])),
            width,
            "  ",
            theme.warning(),
        ));
    }
    lines.push(Line::raw(""));
    lines.extend(wrap(
        &tr(
            "Nothing has been opened. Enter asks before opening it in your browser; d declines, Esc cancels.",
        ),
        width,
        "",
        theme.dim(),
    ));
    lines
}

/// The full URL, broken anywhere, the host highlighted.
pub fn address(view: &UrlView, width: usize, indent: &str, theme: Theme) -> Vec<Line<'static>> {
    let atoms = chars(&[
        (&view.before_host, Style::new()),
        (&view.host, theme.host()),
        (&view.after_host, Style::new()),
    ]);
    flow(atoms, width, indent, "")
}
