//! Every field of every log line — the daemon's and its libraries', zbus's
//! spans at `trace` included — written with its control characters
//! escaped and its length bounded.
//!
//! Outside text reaches the log in many fields: an origin the client sent,
//! a message zbus traces with its body, an error a peer returned. Escaping
//! at the formatter covers them all at every level, whoever logs them,
//! where filtering zbus's `trace` target out would cover one crate and
//! leave the next to be found. ESC, BEL, C1, DEL and bidi overrides
//! become `\u{1b}`-style escapes ([`elicit_proto::text::is_unsafe_char`]),
//! so a line cannot move the cursor, set a title, or fake the next line
//! (a newline inside a field is escaped as well).
//!
//! One field writes at most [`MAX_FIELD_BYTES`]; the rest is counted, not
//! written (and never held: the value is formatted straight through the
//! bound). So one request makes the daemon log a few kilobytes per line
//! at most, at every level, however large what it sent.

use std::fmt::{self, Write};

use elicit_proto::text::is_unsafe_char;
use tracing::field::Field;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::field::delimited::Delimited;
use tracing_subscriber::fmt::format::{FieldFn, Writer, debug_fn};

/// Bytes one field of a log line may write.
pub const MAX_FIELD_BYTES: usize = 4096;

/// How each field is formatted.
type FieldFormat = fn(&mut Writer<'_>, &Field, &dyn fmt::Debug) -> fmt::Result;

/// The field formatter of every subscriber the daemon installs.
pub fn fields() -> Delimited<&'static str, FieldFn<FieldFormat>> {
    let format: FieldFormat = write_field;
    debug_fn(format).delimited(" ")
}

fn write_field(writer: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    if field.name() != "message" {
        write!(writer, "{}=", field.name())?;
    }
    let mut bounded = Escaping::new(writer);
    write!(bounded, "{value:?}")?;
    bounded.finish()
}

/// Writes through to `out`, escaping unsafe characters, until
/// [`MAX_FIELD_BYTES`]; counts the rest.
pub struct Escaping<'w, W: Write + ?Sized> {
    out: &'w mut W,
    written: usize,
    dropped: usize,
}

impl<'w, W: Write + ?Sized> Escaping<'w, W> {
    /// A bounded, escaping writer onto `out`.
    pub fn new(out: &'w mut W) -> Self {
        Escaping {
            out,
            written: 0,
            dropped: 0,
        }
    }

    /// Says how much was left out, if anything was.
    pub fn finish(self) -> fmt::Result {
        match self.dropped {
            0 => Ok(()),
            n => write!(self.out, "…({n} bytes more)"),
        }
    }
}

impl<W: Write + ?Sized> Write for Escaping<'_, W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        for c in text.chars() {
            if self.written >= MAX_FIELD_BYTES {
                self.dropped += c.len_utf8();
                continue;
            }
            if is_unsafe_char(c) {
                let escaped = format!("\\u{{{:x}}}", u32::from(c));
                self.written += escaped.len();
                self.out.write_str(&escaped)?;
            } else {
                self.written += c.len_utf8();
                self.out.write_char(c)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str) -> String {
        let mut out = String::new();
        let mut writer = Escaping::new(&mut out);
        writer.write_str(text).expect("write");
        writer.finish().expect("finish");
        out
    }

    #[test]
    fn controls_are_escaped_and_text_kept() {
        assert_eq!(escaped("a\u{1b}]0;x\u{7}b"), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(
            escaped("\u{9b}2J \u{202e}cba\nnext"),
            "\\u{9b}2J \\u{202e}cba\\u{a}next"
        );
        assert_eq!(escaped("plain été"), "plain été");
    }

    #[test]
    fn a_field_is_bounded() {
        let out = escaped(&"x".repeat(MAX_FIELD_BYTES + 10));
        assert!(out.starts_with(&"x".repeat(MAX_FIELD_BYTES)));
        assert!(out.ends_with("…(10 bytes more)"), "{}", &out[MAX_FIELD_BYTES..]);
    }
}
