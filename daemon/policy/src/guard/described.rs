//! Secrets described rather than named: by how they were sent ("the code
//! we texted you"), where they are printed ("the 3 digits next to the
//! signature", "the digits on the back of your card"), or the file they
//! live in ("your id_ed25519 file").
//!
//! A description pairs a *subject* (code, digits, number) with a *cue*
//! (texted, card, signature) a few words apart, either way round. A
//! subject that a word before it makes ordinary ("ZIP code", "order number
//! we emailed", "phone number") and a cue that is some other card
//! ("library card") do not count.

use std::collections::HashSet;
use std::sync::LazyLock;

use super::fold::{Folded, compact};

/// One kind of description: what it names, its subjects and its cues.
struct Rule {
    term: &'static str,
    subjects: &'static [&'static str],
    cues: &'static [&'static str],
}

/// How many words may stand between a subject and its cue.
const REACH: usize = 6;

const RULES: &[Rule] = &[
    Rule {
        term: "one-time code, by how it was sent",
        subjects: &[
            "code", "codes", "digits", "digit", "number", "numbers", "passcode",
        ],
        cues: &[
            "sent",
            "texted",
            "emailed",
            "sms",
            "text message",
            "authenticator",
            "received",
            "whatsapp",
            "telegram",
            "signal",
        ],
    },
    Rule {
        term: "card number or security code, by where it is printed",
        subjects: &["code", "codes", "digits", "digit", "number", "numbers"],
        cues: &[
            "card",
            "cards",
            "signature",
            "embossed",
            "visa",
            "mastercard",
            "amex",
            "expiry",
            "expiration",
        ],
    },
    Rule {
        term: "PIN, by where it is used",
        subjects: &["digits", "digit", "number", "code"],
        cues: &["atm", "cashpoint", "cash machine", "chip and"],
    },
    Rule {
        term: "security code, by where it is printed",
        subjects: &["digits", "digit"],
        cues: &["back", "reverse"],
    },
    Rule {
        term: "one-time code, by its digits",
        subjects: &["code", "codes"],
        cues: &["digit", "digits", "character", "characters"],
    },
    Rule {
        term: "seed phrase, by its words",
        subjects: &["words"],
        cues: &["wallet", "restore", "mnemonic", "bip39"],
    },
];

/// A word before a subject that makes it an ordinary number or code.
const ORDINARY_SUBJECT: &[&str] = &[
    "zip",
    "postal",
    "post",
    "postcode",
    "promo",
    "promotional",
    "discount",
    "coupon",
    "voucher",
    "referral",
    "invite",
    "invitation",
    "tracking",
    "order",
    "reference",
    "ticket",
    "invoice",
    "customer",
    "country",
    "area",
    "phone",
    "mobile",
    "cell",
    "telephone",
    "product",
    "serial",
    "model",
    "part",
    "room",
    "flight",
    "version",
    "build",
    "error",
    "status",
    "source",
    "qr",
    "bar",
    "barcode",
    "colour",
    "color",
    "hex",
    "language",
    "currency",
    "airport",
    "issue",
    "page",
    "house",
    "street",
    "seat",
    "table",
    "member",
    "membership",
    "library",
    "loyalty",
    "student",
    "employee",
    "case",
    "claim",
    "policy",
    "parcel",
    "package",
    "shipment",
    "lot",
    "batch",
    "sku",
    "vat",
    "tax",
    "registration",
    "license",
    "licence",
    "gift",
    "sim",
    "many",
    "lucky",
    "favourite",
    "favorite",
];

/// A word before "number" that makes it a booking's: the confirmation
/// *code* we sent is a one-time code, the confirmation *number* is not.
const ORDINARY_NUMBER: &[&str] = &["confirmation", "booking", "reservation"];

/// A word right after a subject that makes it a count or a kind:
/// "number of emails", "code of conduct", "numbers per card".
const ORDINARY_AFTER_SUBJECT: &[&str] = &["of", "per", "format", "formats", "style", "length"];

/// A word before a cue that makes it some other card or signature.
const OTHER_CARD: &[&str] = &[
    "library",
    "membership",
    "member",
    "loyalty",
    "student",
    "sim",
    "business",
    "gift",
    "id",
    "sd",
    "graphics",
    "video",
    "sound",
    "network",
    "report",
    "score",
    "playing",
    "greeting",
    "index",
    "flash",
    "memory",
    "wild",
    "insurance",
    "health",
    "boarding",
    "key",
    "transit",
    "metro",
    "email",
    "red",
    "yellow",
    "trading",
    "time",
    "post",
    "christmas",
    "birthday",
];

/// Files that hold key material, named as people name them.
const KEY_FILES: &[&str] = &[
    "id rsa",
    "id ed25519",
    "id ecdsa",
    "id dsa",
    "id ed25519 sk",
    "id ecdsa sk",
    "ppk",
    "pfx",
    "p12",
    "kdbx",
    "keyfile",
    "key file",
    "keypair",
    "key pair",
    "netrc",
    "pgpass",
    "htpasswd",
    "wallet dat",
    "keystore",
    "jks",
    // The usual names of TLS private keys (server.key, privkey.pem, key.pem).
    "privkey",
    "key pem",
    "server key",
    "client key",
    "tls key",
    "ssl key",
];

/// Words that make a key file spoken of, not asked for: its path, its
/// public half, its name.
const KEY_FILE_ABOUT: &[&str] = &[
    "path",
    "paths",
    "location",
    "where",
    "directory",
    "folder",
    "dir",
    "filename",
    "pub",
    "public",
    "fingerprint",
    "exists",
    "permission",
    "permissions",
    "mode",
    "owner",
    "name",
    "names",
    "size",
    "type",
    "format",
    "password",
    "passphrase",
];

struct Folds {
    rules: Vec<(&'static str, HashSet<String>, Vec<String>)>,
    ordinary: HashSet<String>,
    ordinary_number: HashSet<String>,
    numbers: HashSet<String>,
    ordinary_after: HashSet<String>,
    other_card: HashSet<String>,
    key_files: Vec<String>,
    key_file_about: HashSet<String>,
}

static FOLDS: LazyLock<Folds> = LazyLock::new(|| {
    let set = |list: &[&str]| list.iter().map(|w| compact(w)).collect::<HashSet<_>>();
    Folds {
        rules: RULES
            .iter()
            .map(|rule| {
                let cues = rule.cues.iter().map(|w| compact(w)).collect();
                (rule.term, set(rule.subjects), cues)
            })
            .collect(),
        ordinary: set(ORDINARY_SUBJECT),
        ordinary_number: set(ORDINARY_NUMBER),
        numbers: set(&["number", "numbers"]),
        ordinary_after: set(ORDINARY_AFTER_SUBJECT),
        other_card: set(OTHER_CARD),
        key_files: KEY_FILES.iter().map(|w| compact(w)).collect(),
        key_file_about: set(KEY_FILE_ABOUT),
    }
});

/// What secret `text` describes without naming it, if any.
pub(crate) fn find(text: &Folded) -> Option<&'static str> {
    let words: Vec<&str> = text.words.iter().map(|w| w.folded.as_str()).collect();
    find_description(&words).or_else(|| find_key_file(&words))
}

fn find_description(words: &[&str]) -> Option<&'static str> {
    let folds = &*FOLDS;
    for (term, subjects, cues) in &folds.rules {
        for (i, word) in words.iter().enumerate() {
            if !subjects.contains(*word) || ordinary_subject(words, i) {
                continue;
            }
            let from = i.saturating_sub(REACH);
            let to = (i + REACH + 1).min(words.len());
            let cued = (from..to).any(|at| at != i && cue_at(words, at, cues));
            if cued {
                return Some(term);
            }
        }
    }
    None
}

/// Whether the subject at `i` is an ordinary number or code.
fn ordinary_subject(words: &[&str], i: usize) -> bool {
    let folds = &*FOLDS;
    let before = i.checked_sub(1).and_then(|b| words.get(b));
    let number = folds.numbers.contains(words[i]);
    before.is_some_and(|w| folds.ordinary.contains(*w))
        || (number && before.is_some_and(|w| folds.ordinary_number.contains(*w)))
        || words
            .get(i + 1)
            .is_some_and(|w| folds.ordinary_after.contains(*w))
}

/// Whether a cue (one word, or two run together) starts at `at`, and is
/// not some other card.
fn cue_at(words: &[&str], at: usize, cues: &[String]) -> bool {
    let one = words[at];
    let two = words.get(at + 1).map(|next| format!("{one}{next}"));
    let cued = cues
        .iter()
        .any(|cue| cue == one || two.as_deref() == Some(cue.as_str()));
    let other = at
        .checked_sub(1)
        .and_then(|b| words.get(b))
        .is_some_and(|w| FOLDS.other_card.contains(*w));
    cued && !other
}

/// A key file named in a text that is not about its path or its public half.
fn find_key_file(words: &[&str]) -> Option<&'static str> {
    let folds = &*FOLDS;
    if words.iter().any(|w| folds.key_file_about.contains(*w)) {
        return None;
    }
    let mut window = String::new();
    for start in 0..words.len() {
        window.clear();
        for word in words[start..].iter().take(3) {
            window.push_str(word);
            if folds.key_files.contains(&window) {
                return Some("key material, by its file");
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::fold::fold;
    use super::*;

    fn described(text: &str) -> bool {
        find(&fold(text)).is_some()
    }

    #[test]
    fn descriptions_of_secrets_are_found() {
        for text in [
            "the code we texted you",
            "We sent you a 6-digit code",
            "the digits on the back of your card",
            "the 3 digits printed next to the signature",
            "the contents of your id_ed25519 file",
            "Paste ~/.ssh/id_rsa here",
            "The number in the SMS",
            "the 24 words that restore your wallet",
        ] {
            assert!(described(text), "{text}");
        }
    }

    #[test]
    fn ordinary_numbers_and_cards_are_not() {
        for text in [
            "the ZIP code we send mail to",
            "the order number we emailed you",
            "your phone number",
            "the number on your library card",
            "the path to your id_ed25519 file",
            "your id_ed25519.pub",
            "number of emails sent per day",
            "the tracking code you received",
        ] {
            assert!(!described(text), "{text}");
        }
    }
}
