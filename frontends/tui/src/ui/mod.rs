//! Drawing the whole screen from the [`App`] state.

mod flow;
mod form;
mod overlay;
pub mod theme;
mod url;

use elicit_i18n::{fill, tr, trn};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::{App, Overlay};
use crate::entry::{Body, Entry, age, duration};
use theme::Theme;

/// The smallest screen the full layout fits.
const MIN_WIDTH: u16 = 40;
const MIN_HEIGHT: u16 = 10;
/// Queue lines shown at most; more are reached with PgDn.
const QUEUE_LINES: usize = 4;

/// Draws the screen; `now_ms` dates the ages in the queue.
pub fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme, now_ms: u64) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = fill(
            &tr("elicit-tui needs at least {width}x{height}; enlarge the terminal."),
            &[("width", &MIN_WIDTH), ("height", &MIN_HEIGHT)],
        );
        frame.render_widget(
            Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let queue_height = if app.entries.is_empty() {
        0
    } else {
        app.entries.len().min(QUEUE_LINES) as u16 + 1
    };
    let [top, queue, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(queue_height),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(title(app)).style(theme.title()), top);
    if queue_height > 0 {
        draw_queue(frame, app, queue, theme, now_ms);
    }
    draw_body(frame, app, body, theme);
    frame.render_widget(Paragraph::new(status_line(app, theme)), status);
    frame.render_widget(Paragraph::new(key_bar(app, theme)), keys);
    match app.overlay {
        Overlay::None => {}
        Overlay::Help => overlay::help(frame, area, theme),
        Overlay::ConfirmOpen => {
            if let Some(Entry {
                body: Body::Url(view),
                ..
            }) = app.current()
            {
                overlay::confirm_open(frame, area, view, theme);
            }
        }
    }
}

/// The top line: who asks, clearly, before anything else.
fn title(app: &App) -> String {
    match app.current() {
        Some(entry) => {
            let of = if app.entries.len() > 1 {
                let of = tr("[form {n} of {count}]");
                format!(
                    "  {}",
                    fill(&of, &[("n", &(app.selected + 1)), ("count", &app.entries.len())])
                )
            } else {
                String::new()
            };
            let remote = if entry.origin.remote {
                format!(" {}", tr("(remote machine)"))
            } else {
                String::new()
            };
            let asks = fill(
                &tr("{server} asks, for {host}"),
                &[("server", &entry.server()), ("host", &entry.host())],
            );
            format!(" {asks}{remote}{of}")
        }
        None => format!(" {}", tr("elicit-tui: no forms waiting")),
    }
}

fn draw_queue(frame: &mut Frame<'_>, app: &App, area: Rect, theme: Theme, now_ms: u64) {
    let n = app.entries.len();
    let mut lines = vec![Line::styled(
        if n > 1 {
            trn(
                "Waiting: {n} form (PgUp/PgDn to switch)",
                "Waiting: {n} forms (PgUp/PgDn to switch)",
                n,
            )
        } else {
            trn("Waiting: {n} form", "Waiting: {n} forms", n)
        },
        theme.dim(),
    )];
    // Keep the selected entry in view when there are more than fit.
    let first = app.selected.saturating_sub(QUEUE_LINES - 1);
    for (i, entry) in app.entries.iter().enumerate().skip(first).take(QUEUE_LINES) {
        let selected = i == app.selected;
        let behind = app.backlog.get(&entry.session).copied().unwrap_or(0);
        let text = queue_line(i, entry, behind, selected, now_ms, usize::from(area.width));
        let style = if selected { theme.selected() } else { Style::new() };
        lines.push(Line::styled(text, style));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// One line of the queue; the directory is shortened from the left when
/// the line would not fit, since its end says the most.
fn queue_line(i: usize, entry: &Entry, behind: usize, selected: bool, now_ms: u64, width: usize) -> String {
    let who = fill(
        &tr("{server} for {host}"),
        &[("server", &entry.server()), ("host", &entry.host())],
    );
    let head = format!("{}{}. {who}", if selected { "> " } else { "  " }, i + 1);
    let age = age(now_ms, entry.queued_at_ms);
    let mut tail = fill(&tr(", waiting {age}"), &[("age", &age)]);
    if behind > 0 {
        tail.push_str(&trn(", {n} more queued", ", {n} more queued", behind));
    }
    if entry.deadline_ms > 0 {
        let left = duration(entry.deadline_ms.saturating_sub(now_ms) / 1000);
        tail.push_str(&fill(&tr(", times out in {time}"), &[("time", &left)]));
    }
    let Some(cwd) = &entry.origin.cwd else {
        return format!("{head}{tail}");
    };
    let place = tr(" in {cwd}");
    let room = width.saturating_sub(
        head.chars().count() + tail.chars().count() + place.chars().count().saturating_sub("{cwd}".len()),
    );
    let count = cwd.chars().count();
    let cwd = if count <= room {
        cwd.clone()
    } else if room > 3 {
        let keep: String = cwd.chars().skip(count - (room - 3)).collect();
        format!("...{keep}")
    } else {
        return format!("{head}{tail}");
    };
    format!("{head}{}{tail}", fill(&place, &[("cwd", &cwd)]))
}

fn draw_body(frame: &mut Frame<'_>, app: &App, area: Rect, theme: Theme) {
    let Some(entry) = app.current() else {
        let text = match &app.link {
            Ok(()) => tr("Registered with elicitd. Forms appear here when an MCP server asks."),
            Err(_) => tr("Not registered with elicitd yet; waiting for it."),
        };
        frame.render_widget(Paragraph::new(text).style(theme.dim()), area);
        return;
    };
    let block = Block::new().borders(Borders::TOP).title(format!(
        " {} ",
        fill(&tr("Form from {server}"), &[("server", &entry.server())])
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let laid = match &entry.body {
        Body::Form(model) => form::form(&entry.message, model, width, theme),
        Body::Url(view) => {
            let most = url::draw(frame, inner, &entry.message, view, app.scroll, theme);
            app.scroll_max.set(most);
            return;
        }
        Body::Unreadable(why) => {
            let mut lines = flow::wrap(&entry.message, width, "", Style::new());
            lines.extend(flow::wrap(
                &fill(
                    &tr("This form cannot be shown here ({why}). d declines, Esc cancels."),
                    &[("why", why)],
                ),
                width,
                "",
                theme.error(),
            ));
            form::Laid {
                lines,
                ..form::Laid::default()
            }
        }
    };
    let height = usize::from(inner.height);
    let offset = match laid.focus {
        Some((first, last)) if last + 1 > height => (last + 1 - height).min(first),
        _ => 0,
    };
    if let Some((line, column)) = laid.cursor
        && app.overlay == Overlay::None
        && line >= offset
        && line < offset + height
    {
        let y = inner.y + (line - offset) as u16;
        frame.set_cursor_position((inner.x + column.min(inner.width.saturating_sub(1)), y));
    }
    let visible: Vec<Line<'static>> = laid.lines.into_iter().skip(offset).take(height).collect();
    frame.render_widget(Paragraph::new(visible), inner);
}

fn status_line(app: &App, theme: Theme) -> Line<'static> {
    if let Some(status) = app.current().and_then(|e| e.status.clone()) {
        return Line::styled(status, theme.error());
    }
    if let Some(entry) = app.current().filter(|e| e.sending) {
        return Line::raw(fill(
            &tr("Sending the answer to {server}..."),
            &[("server", &entry.server())],
        ));
    }
    if let Some(notice) = app.visible_notice() {
        return Line::raw(notice.to_owned());
    }
    match &app.link {
        Ok(()) => Line::raw(""),
        Err(why) => Line::styled(why.clone(), theme.warning()),
    }
}

fn key_bar(app: &App, theme: Theme) -> Line<'static> {
    // TRANSLATORS: the key bar's words: what a key does, after its name.
    let keys: Vec<(&str, String)> = match app.current().map(|e| &e.body) {
        None => vec![("q", tr("quit")), ("F1", tr("help"))],
        Some(Body::Form(model)) if model.is_confirmation() => vec![
            ("Enter", tr("accept")),
            ("d", tr("decline")),
            ("Esc", tr("cancel")),
            ("?", tr("help")),
        ],
        Some(Body::Form(_)) => vec![
            ("Enter", tr("send")),
            ("Esc", tr("cancel")),
            ("^D", tr("decline")),
            ("Tab", tr("next")),
            ("Space", tr("toggle")),
            ("F1", tr("help")),
        ],
        Some(Body::Url(_)) => vec![
            ("Enter", tr("open...")),
            ("Up/Down", tr("scroll")),
            ("d", tr("decline")),
            ("Esc", tr("cancel")),
            ("?", tr("help")),
        ],
        Some(Body::Unreadable(_)) => vec![("d", tr("decline")), ("Esc", tr("cancel"))],
    };
    let mut spans = Vec::new();
    for (key, what) in keys {
        spans.push(Span::styled(key.to_owned(), theme.key()));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    Line::from(spans)
}
