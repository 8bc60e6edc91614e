//! Laying styled text out in lines of a given width.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Word-wraps `text` to `width` columns, each line prefixed by `indent`;
/// a word longer than a line is broken.
pub fn wrap(text: &str, width: usize, indent: &str, style: Style) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let atoms: Vec<(String, Style)> = paragraph
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(|w| (w.to_owned(), style))
            .collect();
        lines.extend(flow(atoms, width, indent, " "));
    }
    lines
}

/// Places `atoms` greedily on lines of `width` columns, separated by `gap`
/// and prefixed by `indent`; an atom longer than a line is broken by
/// characters. Always returns at least one line.
pub fn flow(atoms: Vec<(String, Style)>, width: usize, indent: &str, gap: &str) -> Vec<Line<'static>> {
    let room = width.saturating_sub(indent.width()).max(1);
    let mut lines = Vec::new();
    let mut spans: Vec<Span<'static>> = vec![Span::raw(indent.to_owned())];
    let mut used = 0;
    for (text, style) in atoms {
        for piece in split_to_width(&text, room) {
            let w = piece.width();
            let sep = if used == 0 { 0 } else { gap.width() };
            if used > 0 && used + sep + w > room {
                lines.push(Line::from(std::mem::replace(
                    &mut spans,
                    vec![Span::raw(indent.to_owned())],
                )));
                used = 0;
            } else if used > 0 {
                spans.push(Span::raw(gap.to_owned()));
                used += sep;
            }
            spans.push(Span::styled(piece, style));
            used += w;
        }
    }
    lines.push(Line::from(spans));
    lines
}

/// Splits `text` into pieces of at most `room` columns.
fn split_to_width(text: &str, room: usize) -> Vec<String> {
    if text.width() <= room {
        return vec![text.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        if (piece.clone() + &c.to_string()).width() > room && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
        }
        piece.push(c);
    }
    pieces.push(piece);
    pieces
}

/// Joins `chars` styled runs into atoms one character each, so that a URL
/// breaks anywhere yet keeps its highlighting.
pub fn chars(parts: &[(&str, Style)]) -> Vec<(String, Style)> {
    parts
        .iter()
        .flat_map(|(text, style)| text.chars().map(move |c| (c.to_string(), *style)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn wraps_words_and_breaks_long_ones() {
        let lines = wrap("one two three", 9, "  ", Style::new());
        let texts: Vec<String> = lines.iter().map(text_of).collect();
        assert_eq!(texts, ["  one two", "  three"]);
        let lines = wrap("abcdefghij", 6, "", Style::new());
        assert_eq!(lines.iter().map(text_of).collect::<Vec<_>>(), ["abcdef", "ghij"]);
    }

    #[test]
    fn characters_flow_without_gaps() {
        let atoms = chars(&[("ab", Style::new()), ("cd", Style::new())]);
        let lines = flow(atoms, 3, "", "");
        assert_eq!(lines.iter().map(text_of).collect::<Vec<_>>(), ["abc", "d"]);
    }
}
