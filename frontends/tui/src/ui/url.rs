//! A URL-mode body: the server's message, which scrolls, above the
//! consent, which elicitd writes and pins: the real address with its host
//! highlighted, its warnings, and the keys. The message is the server's
//! text and may imitate a consent screen; the pinned part is always on
//! screen in full, however long the message, the address or the host.

use elicit_form::UrlView;
use elicit_i18n::{fill, tr};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::flow::{chars, flow, wrap};
use super::theme::Theme;

/// Draws a URL-mode body in `area`: the message scrolled by `scroll`
/// lines (clamped; the most it can scroll is returned), elicitd's rule,
/// and the consent pinned below it.
pub fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    message: &str,
    view: &UrlView,
    scroll: usize,
    theme: Theme,
) -> usize {
    let width = usize::from(area.width);
    let height = usize::from(area.height);
    let mut consent = consent(view, width, theme);
    let hint = hint(width, theme);
    // The address and its warnings first, then the rule; the hint (the
    // key bar says the same) only if a line is left for the message,
    // which gets the rest.
    if consent.len() + hint.len() + 2 <= height {
        consent.extend(hint);
    }
    let consent_height = consent.len().min(height.saturating_sub(1));
    let message = wrap(message, width, "", Style::new());
    let message_height = height.saturating_sub(consent_height + 1);
    let most = message.len().saturating_sub(message_height);
    let scroll = scroll.min(most);
    let mut lines: Vec<Line<'static>> = message.into_iter().skip(scroll).take(message_height).collect();
    lines.resize(message_height, Line::raw(""));
    lines.push(rule(width, scroll, most, theme));
    lines.extend(consent.into_iter().take(consent_height));
    frame.render_widget(Paragraph::new(lines), area);
    most
}

/// The line between the message and the consent: elicitd's, in a style
/// no server text has, with the scroll keys while the message is longer
/// than its room.
fn rule(width: usize, scroll: usize, most: usize, theme: Theme) -> Line<'static> {
    let mut label = format!(" {} ", tr("The server asks you to open this address:"));
    if most > 0 {
        label.push_str(&fill(
            &tr("─ Up/Down scroll the message ({shown}/{total}) "),
            &[("shown", &(scroll + 1)), ("total", &(most + 1))],
        ));
    }
    let dashes = width.saturating_sub(label.chars().count() + 2);
    Line::styled(format!("──{label}{}", "─".repeat(dashes)), theme.key())
}

/// The pinned consent: the address, its host and its warnings.
pub fn consent(view: &UrlView, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = address(view, width, "  ", theme);
    lines.extend(host(view, width, theme));
    // An international name's Unicode reading is in its warning.
    for warning in &view.warnings {
        lines.extend(wrap(
            &format!("! {}", fill(&tr("Warning: {warning}."), &[("warning", warning)])),
            width,
            "  ",
            theme.warning(),
        ));
    }
    lines
}

/// What the keys do.
fn hint(width: usize, theme: Theme) -> Vec<Line<'static>> {
    wrap(
        &tr(
            "Nothing has been opened. Enter asks before opening it in your browser; d declines, Esc cancels.",
        ),
        width,
        "",
        theme.dim(),
    )
}

/// `Host: HOST`, a long host broken by characters onto lines under its
/// start, never cut.
fn host(view: &UrlView, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let label = format!("  {} ", tr("Host:"));
    let indent = " ".repeat(label.chars().count());
    let mut lines = flow(chars(&[(&view.host, theme.host())]), width, &indent, "");
    if let Some(first) = lines.first_mut()
        && let Some(span) = first.spans.first_mut()
    {
        *span = Span::raw(label);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn view(url: &str) -> UrlView {
        let request = serde_json::json!({"mode": "url", "message": "m", "url": url, "elicitationId": "e"});
        let show = elicit_link::ShowRequest {
            form: "1".into(),
            token: "t".into(),
            request_json: request.to_string(),
            origin: Default::default(),
            session: "s".into(),
            queued_at_ms: 0,
            deadline_ms: 0,
        };
        match elicit_link::Entry::new(show).body {
            elicit_form::Body::Url(view) => view,
            other => panic!("not a URL body: {other:?}"),
        }
    }

    /// The screen as text, after drawing `message` and `view` in 80x`height`.
    fn screen(message: &str, view: &UrlView, height: u16, scroll: usize) -> (String, usize) {
        let mut terminal = Terminal::new(TestBackend::new(80, height)).expect("terminal");
        let mut most = 0;
        terminal
            .draw(|frame| most = draw(frame, frame.area(), message, view, scroll, Theme::new(false)))
            .expect("draw");
        let buffer = terminal.backend().buffer().clone();
        let text = (0..height)
            .map(|y| {
                (0..80)
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n");
        (text, most)
    }

    #[test]
    fn a_long_host_wraps_and_the_consent_stays_under_a_message_that_imitates_it() {
        // 240 characters, and a look-alike label (a Cyrillic а) to warn of.
        let labels = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(30)];
        let real = view(&format!("https://{}.p\u{430}ypal.com/login", labels.join(".")));
        let host = real.host.clone();
        assert_eq!(host.chars().count(), 240, "{host}");
        let fake = format!(
            "The server asks you to open this address:\n  https://accounts.google.com/signin\n  Host: accounts.google.com{}",
            "\n".repeat(60)
        );
        let (text, most) = screen(&fake, &real, 18, 0);
        // Lines joined without their indentation: what wraps reads whole.
        let flat: String = text.lines().map(str::trim).collect::<Vec<_>>().concat();
        assert!(flat.contains(&format!("Host: {host}")), "{text}");
        assert!(
            flat.contains("Warning: the host is an international name"),
            "{text}"
        );
        assert!(flat.contains("mixes Latin and Cyrillic letters"), "{text}");
        let rule = text
            .lines()
            .find(|l| l.starts_with("── The server asks you to open"));
        assert!(rule.is_some_and(|r| r.contains("Up/Down")), "{text}");
        assert!(most > 0, "the message scrolls");
        assert!(
            text.starts_with("The server asks you to open this address:"),
            "the imitation, above: {text}"
        );
        let (scrolled, _) = screen(&fake, &real, 18, usize::MAX);
        assert!(
            !scrolled.contains("accounts.google.com/signin"),
            "scrolled past: {scrolled}"
        );
        let flat: String = scrolled.lines().map(str::trim).collect();
        assert!(flat.contains(&format!("Host: {host}")), "{scrolled}");
    }
}
