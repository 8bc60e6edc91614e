//! Text edits by byte range: the smallest change, so that every byte an
//! edit does not name stays as it was.

use std::ops::Range;

/// Replacements of ranges of one text, made together.
#[derive(Debug, Default)]
pub struct Splices(Vec<(Range<usize>, String)>);

impl Splices {
    /// Replace `range` with `text` (an empty range inserts).
    pub fn put(&mut self, range: Range<usize>, text: impl Into<String>) {
        self.0.push((range, text.into()));
    }

    /// `text` with every replacement made; ranges that overlap are a bug
    /// of the caller, reported rather than guessed at.
    pub fn apply(mut self, text: &str) -> Result<String, String> {
        self.0.sort_by_key(|(range, _)| (range.start, range.end));
        let mut out = String::with_capacity(text.len() + 256);
        let mut at = 0;
        for (range, with) in &self.0 {
            if range.start < at || range.end > text.len() || range.start > range.end {
                return Err("two edits of one entry overlap".to_owned());
            }
            out.push_str(text.get(at..range.start).ok_or("an edit splits a character")?);
            out.push_str(with);
            at = range.end;
        }
        out.push_str(text.get(at..).ok_or("an edit splits a character")?);
        Ok(out)
    }
}

/// A JSON string literal for `value` (also a YAML double-quoted scalar).
pub fn quote(value: &str) -> String {
    serde_json::Value::String(value.to_owned()).to_string()
}

/// What goes between two items of a list whose first item starts at
/// `first` with `text[open..first]` before it: the same line break and
/// indentation, or one space where the list is on one line.
pub fn separator(text: &str, open: usize, first: usize) -> String {
    let before = &text[open..first];
    match before.rfind('\n') {
        // With the `\r` of a CRLF file.
        Some(line) if before[line..].trim().is_empty() => {
            let start = if before[..line].ends_with('\r') {
                line - 1
            } else {
                line
            };
            before[start..].to_owned()
        }
        _ => " ".to_owned(),
    }
}

/// The whitespace (spaces and tabs) that starts the line holding `at`.
pub fn indentation(text: &str, at: usize) -> &str {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line..];
    let width = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..width]
}

/// The line break the file uses: `\r\n` if its first line ends so.
pub fn line_break(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}
