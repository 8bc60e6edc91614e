//! What names a secret, and what makes a mention harmless, in the words
//! [`fold`](super::fold) produces.
//!
//! The lists are written as people write them; each entry is folded the
//! same way as the text it is compared with, so `Contraseña`, `mot de
//! passe` and `API key` need no spelling variants.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

#[cfg(test)]
use super::fold::fold;
use super::fold::{Folded, Word, compact};
use super::languages;
use super::lists::{
    ACTIONS_AFTER_TO, CAPITALS, ENDINGS, HARMLESS_AFTER, HARMLESS_BEFORE, HEAD_REACH, HEADS, LINKING,
    MAX_WORDS, NAME_TERMS, PARTICIPLES, PREFIXES, PREPOSITIONS, QUANTITY, RUN_TOGETHER, RUN_TOGETHER_AFTER,
    RUN_TOGETHER_BEFORE, TERMS,
};

/// The folded lists.
pub(crate) struct Lexicon {
    terms: HashMap<String, &'static str>,
    prefixes: Vec<(String, &'static str)>,
    run_together: Vec<(String, &'static str)>,
    capitals: Vec<(String, &'static str)>,
    after: HashSet<String>,
    before: HashSet<String>,
    heads: HashSet<String>,
    prepositions: HashSet<String>,
    linking: HashSet<String>,
    participles: HashSet<String>,
    quantity: Vec<(String, HashSet<String>)>,
    run_after: Vec<String>,
    run_before: Vec<String>,
    actions: HashSet<String>,
    name_terms: HashMap<String, &'static str>,
}

/// The lexicon, folded once.
pub(crate) static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let set = |list: &[&str]| list.iter().map(|w| compact(w)).collect::<HashSet<_>>();
    let pairs = |lists: [&[&'static str]; 2]| {
        lists
            .into_iter()
            .flatten()
            .map(|&w| (compact(w), w))
            .collect::<Vec<_>>()
    };
    Lexicon {
        terms: pairs([TERMS, languages::TERMS]).into_iter().collect(),
        prefixes: pairs([PREFIXES, languages::PREFIXES]),
        run_together: pairs([RUN_TOGETHER, languages::RUN_TOGETHER]),
        capitals: CAPITALS.iter().map(|&t| (super::fold::shape(t), t)).collect(),
        after: set(HARMLESS_AFTER),
        before: set(HARMLESS_BEFORE),
        heads: set(HEADS),
        prepositions: set(PREPOSITIONS),
        linking: set(LINKING),
        participles: set(PARTICIPLES),
        quantity: QUANTITY
            .iter()
            .map(|(first, next)| (compact(first), set(next)))
            .collect(),
        run_after: RUN_TOGETHER_AFTER.iter().map(|w| compact(w)).collect(),
        run_before: RUN_TOGETHER_BEFORE.iter().map(|w| compact(w)).collect(),
        actions: set(ACTIONS_AFTER_TO),
        name_terms: NAME_TERMS.iter().map(|&t| (compact(t), t)).collect(),
    }
});

impl Lexicon {
    /// The first term in `text` that asks for a secret, ignoring mentions
    /// that only qualify something else.
    pub(crate) fn find(&self, text: &Folded) -> Option<&'static str> {
        self.find_words(&text.words, false)
            .or_else(|| self.find_run_together(&text.joined))
    }

    /// As [`Lexicon::find`], for a field's identifier, where programmers'
    /// short forms (`db_pass`) name a secret too.
    pub(crate) fn find_in_name(&self, name: &Folded) -> Option<&'static str> {
        self.find_words(&name.words, true)
            .or_else(|| self.find_run_together(&name.joined))
    }

    /// Whether `text` has a capitals-only term ("PIN") in capitals.
    pub(crate) fn capitals(&self, text: &Folded) -> Option<&'static str> {
        text.words.iter().find_map(|word| {
            self.capitals
                .iter()
                .find(|(shape, _)| *shape == word.shape)
                .map(|(_, term)| *term)
        })
    }

    fn find_words(&self, words: &[Word], in_name: bool) -> Option<&'static str> {
        let mut i = 0;
        let mut window = String::new();
        while i < words.len() {
            // The longest term at `i` decides, so that the harmless "secret
            // key name" is not caught again as "secret".
            let mut longest = None;
            window.clear();
            for (len, word) in words[i..].iter().take(MAX_WORDS).enumerate() {
                window.push_str(&word.folded);
                let named = in_name.then(|| self.name_terms.get(window.as_str()).copied());
                if let Some(term) = self.term(&window).or(named.flatten()) {
                    longest = Some((len + 1, term));
                }
            }
            if longest.is_none() {
                longest = self
                    .prefixes
                    .iter()
                    .find(|(prefix, _)| words[i].folded.starts_with(prefix.as_str()))
                    .map(|(_, term)| (1, *term));
            }
            match longest {
                Some((len, term)) if !self.harmless(words, i, i + len) => return Some(term),
                Some((len, _)) => i += len,
                None => i += 1,
            }
        }
        None
    }

    /// The term `window` is, with or without a plural ending.
    fn term(&self, window: &str) -> Option<&'static str> {
        if let Some(term) = self.terms.get(window) {
            return Some(term);
        }
        ENDINGS.iter().find_map(|ending| {
            let stem = window.strip_suffix(ending)?;
            self.terms.get(stem).copied()
        })
    }

    /// Whether the term at `start..end` only qualifies something else.
    fn harmless(&self, words: &[Word], start: usize, end: usize) -> bool {
        let at = |i: usize| words.get(i).map(|w| w.folded.as_str());
        if at(end).is_some_and(|w| self.after.contains(w)) {
            return true;
        }
        if start > 0 && at(start - 1).is_some_and(|w| self.before.contains(w)) {
            return true;
        }
        if at(end).is_some_and(|w| w == compact("to"))
            && at(end + 1).is_some_and(|w| self.actions.contains(w))
        {
            return true;
        }
        let linked = at(end).is_some_and(|w| self.linking.contains(w))
            && (end + 1..=end + 2).any(|i| at(i).is_some_and(|w| self.participles.contains(w)));
        if linked {
            return true;
        }
        let asks_quantity = (start.saturating_sub(2 * HEAD_REACH)..start).any(|i| {
            self.quantity.iter().any(|(first, next)| {
                at(i) == Some(first.as_str()) && at(i + 1).is_some_and(|w| next.contains(w))
            })
        });
        if asks_quantity {
            return true;
        }
        (1..=HEAD_REACH).any(|distance| {
            let Some(prep) = start.checked_sub(distance) else {
                return false;
            };
            prep > 0
                && at(prep).is_some_and(|w| self.prepositions.contains(w))
                && at(prep - 1).is_some_and(|w| self.heads.contains(w))
        })
    }

    fn find_run_together(&self, joined: &str) -> Option<&'static str> {
        for (term_text, term) in &self.run_together {
            for (at, _) in joined.match_indices(term_text.as_str()) {
                let before = &joined[..at];
                let after = &joined[at + term_text.len()..];
                let harmless = self.run_after.iter().any(|w| after.starts_with(w.as_str()))
                    || self.run_before.iter().any(|w| before.ends_with(w.as_str()));
                if !harmless {
                    return Some(term);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<&'static str> {
        LEXICON.find(&fold(text))
    }

    #[test]
    fn every_term_folds_to_something() {
        for term in TERMS.iter().chain(PREFIXES).chain(RUN_TOGETHER) {
            assert!(!compact(term).is_empty(), "{term}");
        }
    }

    #[test]
    fn finds_terms_and_skips_qualified_mentions() {
        assert_eq!(find("Enter your password"), Some("password"));
        assert_eq!(find("API_KEY"), Some("api key"));
        assert_eq!(find("Passwörter"), Some("passwort"));
        assert_eq!(find("Введите пароль"), Some("парол"));
        assert_eq!(find("请输入您的密码"), Some("密码"));
        assert_eq!(find("token count"), None);
        assert_eq!(find("a name for the new access token"), None);
        assert_eq!(find("secret key name"), None);
        assert_eq!(find("密码策略"), None);
    }
}
