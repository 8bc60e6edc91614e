//! Mnemonic letters (Alt+letter) for the window's buttons and fields, so
//! that no two widgets share one in any language.

/// Hands out mnemonic letters so that no two widgets share one.
#[derive(Debug, Default)]
pub struct Mnemonics {
    used: Vec<char>,
}

impl Mnemonics {
    /// Mnemonics with `letters` already taken (the buttons').
    pub fn reserving(letters: &str) -> Self {
        Mnemonics {
            used: letters.chars().flat_map(char::to_lowercase).collect(),
        }
    }

    /// The letters that the mnemonic `labels` ("_Accept", "C_lose") use:
    /// the character after each single `_`. Taken from the translated
    /// labels, so that fields keep clear of each language's buttons.
    pub fn letters_of(labels: &[&str]) -> String {
        labels
            .iter()
            .filter_map(|label| {
                let mut chars = label.chars();
                while let Some(c) = chars.next() {
                    if c == '_' {
                        match chars.next() {
                            Some('_') => continue,
                            // Mnemonics ignore case: Alt+A and Alt+a are one key.
                            next => return next.map(|c| c.to_lowercase().next().unwrap_or(c)),
                        }
                    }
                }
                None
            })
            .collect()
    }

    /// `text` with its underscores doubled and `_` before the first letter
    /// or digit not taken yet (none when every one is taken).
    pub fn label(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 1);
        let mut placed = false;
        for c in text.chars() {
            if !placed && c.is_alphanumeric() {
                let lower = c.to_lowercase().next().unwrap_or(c);
                if !self.used.contains(&lower) {
                    self.used.push(lower);
                    out.push('_');
                    placed = true;
                }
            }
            if c == '_' {
                out.push('_');
            }
            out.push(c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_are_unique_and_escape_underscores() {
        assert_eq!(
            Mnemonics::letters_of(&["_Accept", "C_lose", "A__b_c", "none"]),
            "alc"
        );
        let mut m = Mnemonics::reserving("adc");
        assert_eq!(m.label("Name"), "_Name");
        assert_eq!(m.label("Number"), "N_umber");
        assert_eq!(m.label("a_b"), "a___b");
        assert_eq!(m.label("ad"), "ad");
    }
}
