//! Text folded for comparison: what a person reads as the same word
//! becomes the same string, however it was encoded.
//!
//! A server that wants a password past the guard writes it so that a
//! person still reads "password" while a naive comparison does not:
//! fullwidth letters, a Cyrillic `а`, a zero-width space inside the word,
//! `p_a_s_s_w_o_r_d`, accents dropped or added. Folding undoes each:
//! NFKC (fullwidth, ligatures), dropping invisible characters, splitting
//! into words (camelCase humps, anything that is not a letter or a digit),
//! joining runs of single letters, case folding, the Unicode TR39
//! confusable skeleton (Cyrillic `а` and Latin `a` alike), and dropping
//! combining marks (`contraseña` and `contrasena` alike).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;
use unicode_security::confusable_detection::skeleton;

/// The controls that make what follows display right to left: RLE, RLO,
/// RLI, RLM and the Arabic letter mark.
const RIGHT_TO_LEFT: &[char] = &['\u{202b}', '\u{202e}', '\u{2067}', '\u{200f}', '\u{061c}'];

/// One word of a folded text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// Case-folded, confusables mapped to their prototype, marks dropped:
    /// the form every comparison uses.
    pub folded: String,
    /// The confusable skeleton with case kept, for the few terms that count
    /// only in capitals ("PIN", not the verb "pin").
    pub shape: String,
    /// Whether the word was written in digits (the skeleton makes `1` an
    /// `l`, so the folded form no longer says).
    pub number: bool,
}

/// A folded text: its words, and all of them run together (for scripts
/// that do not separate words, such as Chinese and Japanese).
#[derive(Debug, Clone, Default)]
pub(crate) struct Folded {
    /// The words in order.
    pub words: Vec<Word>,
    /// Every word's folded form, concatenated.
    pub joined: String,
}

/// Folds `text`; see the module documentation.
pub(crate) fn fold(text: &str) -> Folded {
    // A right-to-left override shows "drowssap" as "password": the text is
    // judged as stored and as shown.
    let reversed;
    let text = if text.chars().any(|c| RIGHT_TO_LEFT.contains(&c)) {
        reversed = format!("{text} {}", text.chars().rev().collect::<String>());
        reversed.as_str()
    } else {
        text
    };
    let visible: String = text.nfkc().filter(|&c| !invisible(c)).collect();
    // "CC#" and "Card #" say "number".
    let visible = visible.replace('#', " number ");
    let words = join_single_letters(split(&visible));
    let mut folded = Folded::default();
    for word in words {
        let shape: String = skeleton(&word).collect();
        let lower = word.to_lowercase();
        let folded_word: String = skeleton(&lower)
            .flat_map(char::to_lowercase)
            .filter(|&c| !is_combining_mark(c))
            .collect();
        if folded_word.is_empty() {
            continue;
        }
        folded.joined.push_str(&folded_word);
        folded.words.push(Word {
            folded: folded_word,
            shape,
            number: word.chars().all(|c| c.is_ascii_digit()),
        });
    }
    folded
}

/// Folds a field's identifier, where letters and digits also part words:
/// `PIN1` is the PIN's first digit, `password2` a second password.
pub(crate) fn fold_identifier(text: &str) -> Folded {
    let mut spaced = String::with_capacity(text.len() + 4);
    let mut prev: Option<char> = None;
    for c in text.chars() {
        let boundary = prev.is_some_and(|p| {
            (p.is_alphabetic() && c.is_ascii_digit()) || (p.is_ascii_digit() && c.is_alphabetic())
        });
        if boundary {
            spaced.push(' ');
        }
        spaced.push(c);
        prev = Some(c);
    }
    fold(&spaced)
}

/// The folded form of a single word or phrase run together: how a term of
/// the lexicon is compared.
pub(crate) fn compact(text: &str) -> String {
    fold(text).joined
}

/// The confusable skeleton of `text` with case kept.
pub(crate) fn shape(text: &str) -> String {
    skeleton(text).collect()
}

/// Characters that draw nothing (or nothing that separates words): format
/// characters such as the zero-width space and joiners, soft hyphen, the
/// BOM, controls, and the Hangul fillers.
fn invisible(c: char) -> bool {
    elicit_proto::text::is_unsafe_char(c)
        || matches!(c, '\u{034f}' | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' | '\u{180b}'..='\u{180f}' | '\u{fe00}'..='\u{fe0f}')
}

/// The words of `text`, case kept: split at anything but letters and
/// digits and at camelCase humps, so that `apiKey`, `api_key`, `API-Key`
/// and "API key" all give the words `api` and `key`.
pub(crate) fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        // Combining marks belong to their letter: the virama of Devanagari
        // and Tamil is no letter, but splits no word.
        if !c.is_alphanumeric() && !is_combining_mark(c) {
            flush(&mut word, &mut out);
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if hump {
            flush(&mut word, &mut out);
        }
        word.push(c);
    }
    flush(&mut word, &mut out);
    out
}

fn flush(word: &mut String, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(std::mem::take(word));
    }
}

/// Runs of two or more one-letter words joined into one: a word spelt out
/// letter by letter (`p_a_s_s_w_o_r_d`, "p a s s w o r d") is that word.
fn join_single_letters(words: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut run = String::new();
    for word in words {
        if word.chars().nth(1).is_none() {
            run.push_str(&word);
            continue;
        }
        if !run.is_empty() {
            out.push(std::mem::take(&mut run));
        }
        out.push(word);
    }
    if !run.is_empty() {
        out.push(run);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(text: &str) -> Vec<String> {
        fold(text).words.into_iter().map(|w| w.folded).collect()
    }

    #[test]
    fn disguises_fold_to_the_plain_word() {
        let plain = compact("password");
        for disguised in [
            "PASSWORD",
            "Password",
            "p_a_s_s_w_o_r_d",
            "p a s s w o r d",
            "pass\u{200b}word",
            "pass\u{00ad}word",
            "ｐａｓｓｗｏｒｄ",
            "p\u{0430}ssword",
            "pa\u{0455}\u{0455}word",
            "PASS\u{2060}WORD",
        ] {
            assert_eq!(compact(disguised), plain, "{disguised:?}");
        }
        assert_eq!(compact("Contraseña"), compact("contrasena"));
    }

    #[test]
    fn words_split_identifiers_and_sentences() {
        assert_eq!(split("கடவுச்சொல்லை உள்ளிடவும்").len(), 2);
        let pin: Vec<bool> = fold_identifier("PIN1")
            .words
            .into_iter()
            .map(|w| w.number)
            .collect();
        assert_eq!(pin, [false, true]);
        assert_eq!(split("apiKey"), ["api", "Key"]);
        assert_eq!(split("API_KEY"), ["API", "KEY"]);
        assert_eq!(split("APIKey"), ["API", "Key"]);
        assert_eq!(folded("CC#").len(), 2);
        assert_eq!(folded("Enter the code"), folded("enter  THE code"));
    }
}
