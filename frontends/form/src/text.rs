//! A line of text being typed, with a cursor.

/// One line of text and a cursor inside it.
///
/// The cursor counts characters (Unicode scalar values), not bytes, so that
/// moving it never splits a character.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextInput {
    text: String,
    cursor: usize,
}

impl TextInput {
    /// A line holding `text`, with the cursor at its end.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let cursor = text.chars().count();
        TextInput { text, cursor }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The number of characters.
    pub fn len(&self) -> usize {
        self.text.chars().count()
    }

    /// True when nothing has been typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text and puts the cursor at its end.
    pub fn set(&mut self, text: impl Into<String>) {
        *self = TextInput::new(text);
    }

    /// Inserts `c` at the cursor; control characters are ignored because a
    /// value is one line and must not hide characters from the user.
    pub fn insert(&mut self, c: char) {
        if c.is_control() {
            return;
        }
        let at = self.byte_at(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            let at = self.byte_at(self.cursor);
            self.text.remove(at);
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.len() {
            let at = self.byte_at(self.cursor);
            self.text.remove(at);
        }
    }

    /// Moves the cursor one character left.
    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    /// Moves the cursor one character right.
    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.len());
    }

    /// Moves the cursor to the start.
    pub fn home(&mut self) {
        self.cursor = 0;
    }

    /// Moves the cursor to the end.
    pub fn end(&mut self) {
        self.cursor = self.len();
    }

    /// Deletes everything before the cursor (Ctrl-U in a shell).
    pub fn kill_to_start(&mut self) {
        let at = self.byte_at(self.cursor);
        self.text.replace_range(..at, "");
        self.cursor = 0;
    }

    fn byte_at(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_at_the_cursor_by_character() {
        let mut t = TextInput::new("añb");
        t.left();
        t.backspace();
        assert_eq!((t.text(), t.cursor()), ("ab", 1));
        t.insert('é');
        t.insert('\n');
        assert_eq!((t.text(), t.cursor()), ("aéb", 2));
        t.delete();
        t.home();
        t.delete();
        assert_eq!(t.text(), "é");
        t.end();
        t.right();
        assert_eq!(t.cursor(), 1);
        t.kill_to_start();
        assert!(t.is_empty());
    }
}
