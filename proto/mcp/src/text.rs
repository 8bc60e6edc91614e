//! Text from outside made safe to print on a terminal.
//!
//! A server name, a message or a field title comes from an MCP server or a
//! client that may be hostile. Written raw to a terminal, an ESC starts an
//! escape sequence (OSC 0 sets the window title, OSC 52 writes the
//! clipboard, `CSI 2J` clears the screen), a C1 byte such as U+009B does the
//! same on terminals that honour 8-bit controls, and a bidi override
//! (U+202E) reorders what follows so that the reader sees other text than
//! was sent. Everything that prints such text for a person goes through
//! [`escape_controls`]; JSON for scripts goes through [`json_safe`].

use std::borrow::Cow;

use unicode_general_category::{GeneralCategory, get_general_category};

/// Whether `c` must not reach a terminal as it is: C0 and C1 controls, DEL,
/// format characters (bidi overrides and isolates, zero-width characters,
/// the BOM, tags), and the line and paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    // Printable ASCII is most of any text: no table lookup for it (a
    // 100 MB listing is printed through here).
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// `text` with every unsafe character (see [`is_unsafe_char`]) written as a
/// visible escape, `\u{1b}` for ESC, so that the reader sees that something
/// was there and what. Backslashes stay as they are: text that merely looks
/// like an escape does nothing to a terminal, and a whole line that was
/// already escaped (or printed with `{:?}`) passes through unchanged.
/// Borrowed when nothing needed escaping.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A JSON document with every unsafe character inside its strings written
/// as a `\uXXXX` escape (a surrogate pair above U+FFFF): the same JSON to a
/// parser, harmless to a terminal. serde_json already escapes C0; C1, DEL,
/// bidi overrides and the rest would otherwise pass through raw. Outside
/// strings JSON holds only ASCII punctuation and whitespace, so the whole
/// text can be scanned without parsing it.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    let unsafe_in_json = |c: char| c != '\n' && c != '\t' && c != '\r' && is_unsafe_char(c);
    if !json.chars().any(unsafe_in_json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_in_json(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_kind_of_control() {
        let hostile = "a\u{1b}]0;title\u{7}b\u{1b}[2Jc\u{9b}31md\u{202e}e\u{7f}f\u{200b}g\\u{1b}";
        let safe = escape_controls(hostile);
        assert_eq!(
            safe,
            "a\\u{1b}]0;title\\u{7}b\\u{1b}[2Jc\\u{9b}31md\\u{202e}e\\u{7f}f\\u{200b}g\\u{1b}"
        );
        assert!(!safe.chars().any(is_unsafe_char));
        assert_eq!(escape_controls(&safe), safe, "escaping twice changes nothing");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "deployer",
            "Passwort für Straße",
            "密码 パスワード 비밀번호",
            "emoji 🙂",
            "",
        ] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn json_stays_json() {
        let value = serde_json::json!({"server": "x\u{9b}2J\u{202e}\u{1b}\u{e0001}y"});
        let text = value.to_string();
        let safe = json_safe(&text);
        assert!(!safe.chars().any(is_unsafe_char), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
