//! ECMA-262 patterns matched in linear time.
//!
//! `regress` (an ECMA-262 engine) decides whether a `pattern` is valid, but
//! it matches by backtracking: `^(a+)+$` against forty `a`s and a `!` runs
//! for days, and the schema check runs that match on every `default` a
//! server sends. So every pattern is also translated into the `regex`
//! crate's syntax, whose automata match in time linear in the text, and
//! only that translation is ever matched. The translation keeps the
//! ECMA-262 meaning of each construct (`.`, `\d`, `\w`, `\s`, `\b` and
//! `$` differ between the two syntaxes); what has no linear-time
//! equivalent (backreferences, lookaround) is refused instead of risking
//! an unbounded match.

use std::fmt::Write as _;
use std::iter::Peekable;
use std::str::Chars;

use regex_automata::Input;
use regex_automata::meta;
use regex_automata::nfa::thompson::WhichCaptures;

/// The largest compiled program accepted; it bounds the compile's time
/// (about 1.2 ms at this size, release build), its memory while it runs
/// (about 2.5 times this) and, with the text length, the worst-case match.
/// Chosen from measured sizes (docs/benchmarks.md): an ASCII class
/// repeated a thousand times is 113 KB and `^.{1,100}$` 143 KB (ECMA-262's
/// `.` is a Unicode class, some 1.4 KB a repetition), while `.{750}` is
/// 1 MB; the former limit of 1 MiB let a 3 KB form of 64 such patterns
/// cost 0.3 s to check.
pub(crate) const SIZE_LIMIT: usize = 256 * 1024;

/// The lazy DFA's cache while one text is matched (it is dropped after).
const MATCH_CACHE: usize = 256 * 1024;

/// ECMA-262 `WhiteSpace` and `LineTerminator`: what `\s` means there.
const SPACE: &str =
    r"\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// ECMA-262 `\w` (without the `u` and `i` flags): ASCII only.
const WORD: &str = r"0-9A-Za-z_";
/// ECMA-262 `\d`: ASCII only (`regex`'s `\d` is every Unicode digit).
const DIGIT: &str = r"0-9";

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// Not valid ECMA-262.
    Syntax(String),
    /// Valid, but not matchable in linear time (or too large).
    Unsupported(String),
}

/// Compiles `source`: checked as ECMA-262, matched as its translation.
pub(crate) fn compile(source: &str) -> Result<Regex, PatternError> {
    regress::Regex::new(source).map_err(|e| PatternError::Syntax(e.to_string()))?;
    let translated = translate(source).map_err(|what| {
        PatternError::Unsupported(format!(
            "{what} cannot be matched in linear time, so patterns may not use them"
        ))
    })?;
    let config = meta::Config::new()
        .nfa_size_limit(Some(SIZE_LIMIT))
        .onepass_size_limit(Some(SIZE_LIMIT))
        .dfa_size_limit(Some(SIZE_LIMIT))
        .hybrid_cache_capacity(MATCH_CACHE)
        // Only whether a text matches is ever asked.
        .which_captures(WhichCaptures::None);
    meta::Builder::new()
        .configure(config)
        .build(&translated)
        .map(|regex| Regex { regex })
        .map_err(|e| {
            if e.size_limit().is_some() {
                PatternError::Unsupported(
                    "is too large to match quickly (fewer or smaller repetitions)".into(),
                )
            } else {
                // A construct the translation passed on that `regex`
                // reads differently; refusing is safer than a guess.
                PatternError::Unsupported(format!("has a construct this checker does not support ({e})"))
            }
        })
}

/// A compiled translation.
#[derive(Debug)]
pub(crate) struct Regex {
    regex: meta::Regex,
}

impl Regex {
    /// Whether `text` contains a match. The search's cache is made for
    /// this text and dropped after, so that a compiled pattern kept in
    /// [`crate::pattern_cache`] holds what [`Regex::bytes`] says and no
    /// more (the regex's own pool would keep a cache of up to
    /// [`MATCH_CACHE`] for every thread that ever matched).
    pub(crate) fn is_match(&self, text: &str) -> bool {
        let mut cache = self.regex.create_cache();
        self.regex.is_match_with(&mut cache, &Input::new(text))
    }

    /// The heap bytes the compiled program holds.
    pub(crate) fn bytes(&self) -> usize {
        self.regex.memory_usage()
    }
}

/// Translates an ECMA-262 pattern (no flags) that `regress` accepted into
/// `regex` syntax with the same matches; the error names what has no
/// linear-time equivalent.
pub(crate) fn translate(source: &str) -> Result<String, &'static str> {
    let mut chars = source.chars().peekable();
    let mut out = String::with_capacity(source.len() * 2);
    while let Some(c) = chars.next() {
        match c {
            '\\' => match escape(&mut chars)? {
                Atom::Char(c) => push_char(&mut out, c),
                Atom::Set { body, negated } => push_set(&mut out, body, negated),
                Atom::Raw(raw) => out.push_str(raw),
            },
            '[' => class(&mut chars, &mut out)?,
            // ECMA-262 `.` stops at every line terminator, not only `\n`.
            '.' => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '(' => {
                if chars.peek() == Some(&'?') {
                    chars.next();
                    match chars.next() {
                        Some(':') => {}
                        Some('<') if !matches!(chars.peek(), Some('=' | '!')) => {
                            // A named group: the name only matters to
                            // backreferences, which are refused anyway.
                            for c in chars.by_ref() {
                                if c == '>' {
                                    break;
                                }
                            }
                        }
                        Some('=' | '!' | '<') => return Err("lookaround assertions"),
                        _ => return Err("group modifiers"),
                    }
                }
                // Captures do not change whether a text matches.
                out.push_str("(?:");
            }
            '{' => match quantifier(&chars) {
                Some(body) => {
                    for _ in 0..body.chars().count() {
                        chars.next();
                    }
                    out.push('{');
                    out.push_str(&body);
                }
                // Annex B: a brace that starts no quantifier is itself.
                None => push_char(&mut out, '{'),
            },
            ')' | '|' | '*' | '+' | '?' | '^' | '$' => out.push(c),
            c => push_char(&mut out, c),
        }
    }
    Ok(out)
}

/// What one escape or class item stands for.
enum Atom {
    /// One character.
    Char(char),
    /// A class body (ranges), possibly complemented.
    Set { body: &'static str, negated: bool },
    /// `regex` syntax to copy as it is (only outside classes).
    Raw(&'static str),
}

fn push_char(out: &mut String, c: char) {
    // `\x{…}` is a literal in every position of `regex` syntax, inside
    // classes too, so no character needs its own escaping rule.
    let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
}

fn push_set(out: &mut String, body: &str, negated: bool) {
    out.push('[');
    if negated {
        out.push('^');
    }
    out.push_str(body);
    out.push(']');
}

/// `{n}`, `{n,}` or `{n,m}` after a `{`: the rest up to and with the `}`.
fn quantifier(chars: &Peekable<Chars<'_>>) -> Option<String> {
    let mut body = String::new();
    let mut digits = 0;
    let mut comma = false;
    for c in chars.clone() {
        body.push(c);
        match c {
            '0'..='9' => digits += 1,
            ',' if digits > 0 && !comma => comma = true,
            '}' if digits > 0 => return Some(body),
            _ => return None,
        }
    }
    None
}

fn hex(chars: &mut Peekable<Chars<'_>>, n: usize) -> Option<char> {
    let ahead: String = chars.clone().take(n).collect();
    if ahead.len() != n || !ahead.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let code = u32::from_str_radix(&ahead, 16).ok()?;
    let c = char::from_u32(code)?;
    for _ in 0..n {
        chars.next();
    }
    Some(c)
}

/// One escape, after its backslash, outside a class.
fn escape(chars: &mut Peekable<Chars<'_>>) -> Result<Atom, &'static str> {
    let Some(c) = chars.next() else {
        return Err("a trailing backslash");
    };
    Ok(match c {
        'b' => Atom::Raw(r"(?-u:\b)"),
        'B' => Atom::Raw(r"(?-u:\B)"),
        other => class_escape(other, chars)?,
    })
}

/// One escape that means the same inside and outside a class.
fn class_escape(c: char, chars: &mut Peekable<Chars<'_>>) -> Result<Atom, &'static str> {
    Ok(match c {
        'd' => Atom::Set {
            body: DIGIT,
            negated: false,
        },
        'D' => Atom::Set {
            body: DIGIT,
            negated: true,
        },
        'w' => Atom::Set {
            body: WORD,
            negated: false,
        },
        'W' => Atom::Set {
            body: WORD,
            negated: true,
        },
        's' => Atom::Set {
            body: SPACE,
            negated: false,
        },
        'S' => Atom::Set {
            body: SPACE,
            negated: true,
        },
        't' => Atom::Char('\t'),
        'n' => Atom::Char('\n'),
        'v' => Atom::Char('\u{B}'),
        'f' => Atom::Char('\u{C}'),
        'r' => Atom::Char('\r'),
        '0' if !chars.peek().is_some_and(char::is_ascii_digit) => Atom::Char('\0'),
        '0'..='9' => return Err("backreferences and octal escapes"),
        'x' => Atom::Char(hex(chars, 2).unwrap_or('x')),
        'u' => match hex(chars, 4) {
            Some(c) => Atom::Char(c),
            // `\u{…}`, a lone surrogate half or annex B's plain `u`.
            None => return Err("escapes other than \\uXXXX of a whole character"),
        },
        'c' => match chars.peek().copied() {
            Some(letter) if letter.is_ascii_alphabetic() => {
                chars.next();
                Atom::Char(char::from(letter as u8 % 32))
            }
            _ => return Err("`\\c` without a control letter"),
        },
        // Syntax characters and other punctuation stand for themselves.
        c if c.is_ascii_punctuation() || !c.is_ascii() => Atom::Char(c),
        // `\k`, `\p` and annex B letter escapes mean different things in
        // different modes; refusing them beats guessing.
        _ => return Err("letter escapes other than \\d \\w \\s \\b \\t \\n \\v \\f \\r \\x \\u \\c"),
    })
}

/// A class `[…]`, after its `[`.
fn class(chars: &mut Peekable<Chars<'_>>, out: &mut String) -> Result<(), &'static str> {
    let negated = chars.next_if_eq(&'^').is_some();
    // Each item, and whether it is an unescaped `-` (a range operator
    // where it stands between two characters; `\-` never is one).
    let mut items: Vec<(Atom, bool)> = Vec::new();
    let mut body = String::new();
    loop {
        let Some(c) = chars.next() else {
            return Err("an unclosed class");
        };
        let atom = match c {
            ']' => break,
            '\\' => match chars.next() {
                // Inside a class `\b` is a backspace and `\-` a dash.
                Some('b') => Atom::Char('\u{8}'),
                Some('B') => return Err("`\\B` in a class"),
                Some(c) => class_escape(c, chars)?,
                None => return Err("a trailing backslash"),
            },
            c => Atom::Char(c),
        };
        items.push((atom, c == '-'));
    }
    // Ranges: `a-z` between two characters; a dash next to a set escape
    // or at either end is a literal dash (annex B).
    let mut i = 0;
    while i < items.len() {
        match (&items[i].0, items.get(i + 1), items.get(i + 2)) {
            (Atom::Char(lo), Some((_, true)), Some((Atom::Char(hi), _))) => {
                if lo > hi {
                    return Err("a range out of order");
                }
                push_char(&mut body, *lo);
                body.push('-');
                push_char(&mut body, *hi);
                i += 3;
            }
            (Atom::Char(c), _, _) => {
                push_char(&mut body, *c);
                i += 1;
            }
            (Atom::Set { body: set, negated }, _, _) => {
                if *negated {
                    push_set(&mut body, set, true);
                } else {
                    body.push_str(set);
                }
                i += 1;
            }
            (Atom::Raw(_), _, _) => return Err("an assertion in a class"),
        }
    }
    match (body.is_empty(), negated) {
        // `[]` matches nothing and `[^]` any character at all.
        (true, false) => out.push_str(r"[^\x{0}-\x{10FFFF}]"),
        (true, true) => out.push_str(r"[\x{0}-\x{10FFFF}]"),
        _ => {
            out.push('[');
            if negated {
                out.push('^');
            }
            out.push_str(&body);
            out.push(']');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn matches(source: &str, text: &str) -> bool {
        compile(source).expect("compiles").is_match(text)
    }

    #[test]
    fn keeps_the_ecma_meaning() {
        assert!(matches("^[A-Z]{2}[0-9]{10}$", "AB0123456789"));
        assert!(!matches("^[A-Z]{2}[0-9]{10}$", "AB012345678"));
        // `\d` and `\w` are ASCII only; `.` stops at every line terminator.
        assert!(!matches(r"^\d$", "٣"));
        assert!(!matches(r"^\w$", "é"));
        assert!(!matches("^.$", "\u{2028}"));
        assert!(matches("^.$", "é"));
        // `\s` includes the BOM; `$` is the end of the text only.
        assert!(matches(r"^\s$", "\u{FEFF}"));
        assert!(!matches("a$", "a\n"));
        // `\b` is an ASCII word boundary.
        assert!(matches(r"\bcat\b", "a cat!"));
        assert!(matches(r"\bcat", "écat"));
        assert!(!matches(r"\Bcat", "écat"));
        // Annex B: braces and brackets that start nothing are literal.
        assert!(matches("a{", "a{"));
        assert!(matches("x{1,a}", "x{1,a}"));
        assert!(matches("]", "]"));
        // Classes: escapes, literal dashes, `[^]` and `[]`.
        assert!(matches(r"^[\d-z]+$", "1-z"));
        assert!(!matches(r"^[\d-z]+$", "y"));
        assert!(matches(r"^[^\W]$", "a"));
        assert!(matches("^[^]$", "\n"));
        assert!(!matches("[]", "anything"));
        assert!(matches(r"^[\b]$", "\u{8}"));
        assert!(matches(r"^\x41\u00e9\cJ$", "Aé\n"));
        assert!(matches("^(?<year>[0-9]{4})$", "2026"));
        assert!(matches("^(?:ab|c)*?$", "abcab"));
    }

    #[test]
    fn refuses_what_has_no_linear_match() {
        for source in [
            r"(a)\1", "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", r"\k<x>", r"\p{L}",
        ] {
            assert!(
                matches!(compile(source), Err(PatternError::Unsupported(_))),
                "{source}"
            );
        }
        assert!(matches!(compile("(("), Err(PatternError::Syntax(_))));
    }

    /// The figures behind [`SIZE_LIMIT`] (docs/benchmarks.md):
    /// `cargo test -p elicit-mcp --release --lib compiled_sizes -- --ignored --nocapture`.
    #[test]
    #[ignore = "prints measurements"]
    fn compiled_sizes() {
        for source in [
            r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$",
            "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$",
            "^[0-9A-Za-z_]{1,1000}$",
            "^.{1,100}$",
            "^.{1,150}$",
            "^.{0,255}$",
            ".{750}",
        ] {
            let start = Instant::now();
            match compile(source) {
                Ok(regex) => println!("{source}: {} bytes, {:?}", regex.bytes(), start.elapsed()),
                Err(error) => println!("{source}: refused after {:?} ({error:?})", start.elapsed()),
            }
        }
    }

    #[test]
    fn nested_quantifiers_match_in_linear_time() {
        // regress needs about 2^n steps for this (days at n = 40).
        let text = format!("{}!", "a".repeat(100_000));
        let start = Instant::now();
        assert!(!matches("^(a+)+$", &text));
        assert!(!matches("^(a|a)*$", &text));
        assert!(!matches("(.*)*b", &text));
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
