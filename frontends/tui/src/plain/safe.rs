//! What line mode writes reaches a terminal: every control, bidi or other
//! format character that a server put in a name, message, label, choice or
//! hint is written as a visible escape (`\u{1b}`), so that it cannot set
//! the window title, clear the screen or write the clipboard. Line breaks,
//! which line mode itself writes, pass.

use std::io::{self, Write};

use elicit_proto::text::escape_controls;

/// `W`, with everything written to it escaped but for `\n`.
#[derive(Debug)]
pub struct SafeTerminal<W: Write> {
    inner: W,
}

impl<W: Write> SafeTerminal<W> {
    /// Escapes what goes to `inner`.
    pub fn new(inner: W) -> Self {
        SafeTerminal { inner }
    }

    /// The writer behind it.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }
}

impl<W: Write> Write for SafeTerminal<W> {
    // `write!` hands over whole `str` pieces, so each call is valid UTF-8;
    // anything else is shown with replacement characters, never raw.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let mut lines = text.split('\n');
        if let Some(first) = lines.next() {
            self.inner.write_all(escape_controls(first).as_bytes())?;
        }
        for line in lines {
            self.inner.write_all(b"\n")?;
            self.inner.write_all(escape_controls(line).as_bytes())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_line_breaks_kept() {
        let mut out = SafeTerminal::new(Vec::new());
        let server = "evil\u{1b}]0;title\u{7}\u{1b}[2J\u{202e}";
        writeln!(out, "== {server} asks ==").expect("write");
        let text = String::from_utf8(out.get_ref().clone()).expect("UTF-8");
        assert_eq!(text, "== evil\\u{1b}]0;title\\u{7}\\u{1b}[2J\\u{202e} asks ==\n");
    }
}
