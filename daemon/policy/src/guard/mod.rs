//! The built-in secret guard: declines a form that asks for a secret.
//!
//! MCP forbids secrets (passwords, API keys, tokens, payment data) in form
//! mode. The guard is Rust, not a rule: it runs before remembered choices
//! and before every rules file, so no rule that throws, runs out of budget
//! or is ordered first can keep a secret-asking form from being declined.
//! Only the configuration switches it off ([`SecretGuard::Off`]).
//!
//! A field a secret can be typed into (text and number; not yes/no,
//! choices, emails or dates) is judged by its name, its title and its
//! description, each on its own: a harmless name never excuses a
//! description that asks for the secret. When the name and title say
//! nothing (`value`, `input`), the form's message is judged for it too.

mod fold;
mod lists;
mod terms;

use elicit_proto::{Elicitation, Field, FieldKind, Mode, TextFormat};
use serde_json::Value;

pub(crate) use fold::split;
use fold::{Folded, fold};
use terms::LEXICON;

/// Whether the built-in secret guard runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretGuard {
    /// Decline forms that ask for a secret, before any rule runs.
    #[default]
    On,
    /// Leave secret-asking forms to the rules and the human
    /// (`secret-guard = false` in `[policy]` of elicitd's config).
    Off,
}

/// Who decided, as history shows it.
pub(crate) const DECIDED_BY: &str = "built-in: secret-guard";

/// Field names and titles that say nothing about what is asked; such a
/// field is what the message asks for.
const NEUTRAL: &[&str] = &[
    "value",
    "values",
    "val",
    "input",
    "text",
    "answer",
    "response",
    "reply",
    "data",
    "field",
    "entry",
    "string",
    "str",
    "content",
    "result",
    "item",
    "param",
    "parameter",
    "arg",
    "argument",
    "code",
    "v",
    "x",
    "s",
    "q",
    "enter",
    "your",
    "the",
    "here",
    "please",
];

/// Words that make a PIN a postal one: the Indian postal "PIN code".
const POSTAL: &[&str] = &[
    "post", "postal", "postcode", "zip", "office", "delivery", "address", "area",
];

/// Words after `pin` in a field's name that keep it a PIN: `pin_code`.
const PIN_NAME_TAILS: &[&str] = &["code", "number", "nummer", "numero", "kod"];

/// A PIN code in any case, in any text: "PIN-Code", "pincode", "пин-код".
const PIN_CODES: &[&str] = &["pin code", "pincode", "пин код", "пинкод"];

/// Why `request` must be declined, or `None` when it asks for no secret.
pub(crate) fn inspect(request: &Elicitation) -> Option<String> {
    let Mode::Form(form) = &request.mode else {
        return None;
    };
    let mut message: Option<Folded> = None;
    for field in &form.fields {
        if !can_hold_a_secret(field) {
            continue;
        }
        if raw_text(request, field, "format") == Some("password") {
            return Some(reason(field, "format password", None));
        }
        let name = fold(&field.name);
        let raw_title = raw_text(request, field, "title");
        let title = raw_title.map(fold);
        let description = raw_text(request, field, "description").map(fold);
        let texts = [
            ("in its name", Some(&name)),
            ("in its title", title.as_ref()),
            ("in its description", description.as_ref()),
        ];
        for (place, text) in texts {
            if let Some(term) = text.and_then(|text| LEXICON.find(text)) {
                return Some(reason(field, term, Some(place)));
            }
        }
        if let Some(term) = pin(&name, &texts) {
            return Some(reason(field, term, None));
        }
        if neutral(&field.name) && raw_title.is_none_or(neutral) {
            let message = message.get_or_insert_with(|| fold(&request.message));
            let found = LEXICON
                .find(message)
                .or_else(|| (!postal(&[message])).then(|| LEXICON.capitals(message)).flatten());
            if let Some(term) = found {
                return Some(reason(field, term, Some("in the form's message")));
            }
        }
    }
    None
}

/// Text and number fields can carry a secret; booleans, the server's own
/// choices, emails and dates cannot.
fn can_hold_a_secret(field: &Field) -> bool {
    match &field.kind {
        FieldKind::Text { format, .. } => !matches!(
            format,
            Some(TextFormat::Email | TextFormat::Date | TextFormat::DateTime)
        ),
        FieldKind::Number { .. } => true,
        _ => false,
    }
}

/// The field's own `key` as the server sent it (the normalised field folds
/// the title into the label).
fn raw_text<'a>(request: &'a Elicitation, field: &Field, key: &str) -> Option<&'a str> {
    request
        .raw
        .get("requestedSchema")?
        .get("properties")?
        .get(&field.name)?
        .get(key)
        .and_then(Value::as_str)
}

/// A PIN: a field named `pin`, `card_pin`, `pin_code`, or "PIN" (or
/// another capitals-only term) in capitals in its title or description;
/// not the postal PIN code.
fn pin(name: &Folded, texts: &[(&str, Option<&Folded>)]) -> Option<&'static str> {
    let texts: Vec<&Folded> = texts.iter().filter_map(|(_, text)| *text).collect();
    if postal(&texts) {
        return None;
    }
    let words: Vec<&str> = name.words.iter().map(|w| w.folded.as_str()).collect();
    let named = words.iter().enumerate().any(|(i, &word)| {
        word == FOLDED.pin
            && words
                .get(i + 1)
                .is_none_or(|next| FOLDED.pin_tails.iter().any(|tail| tail == next))
    });
    let pin_code = |text: &&Folded| {
        let words = &text.words;
        (0..words.len()).any(|i| {
            let one = words[i].folded.clone();
            let two = words.get(i + 1).map(|next| format!("{one}{}", next.folded));
            FOLDED
                .pin_codes
                .iter()
                .any(|code| *code == one || two.as_ref() == Some(code))
        })
    };
    if named || texts.iter().any(pin_code) {
        return Some("PIN");
    }
    texts.iter().find_map(|text| LEXICON.capitals(text))
}

/// Whether any of `texts` speaks of post or addresses.
fn postal(texts: &[&Folded]) -> bool {
    texts
        .iter()
        .flat_map(|text| &text.words)
        .any(|word| FOLDED.postal.contains(&word.folded))
}

/// Whether a name or title says nothing of what it asks: every word is a
/// generic one, numbers aside (`field1`).
fn neutral(text: &str) -> bool {
    let letters: String = text
        .chars()
        .map(|c| if c.is_ascii_digit() { ' ' } else { c })
        .collect();
    fold(&letters)
        .words
        .iter()
        .all(|word| FOLDED.neutral.contains(&word.folded))
}

/// The lists above, folded as the texts they are compared with.
struct FoldedLists {
    neutral: Vec<String>,
    postal: Vec<String>,
    pin: String,
    pin_tails: Vec<String>,
    pin_codes: Vec<String>,
}

static FOLDED: std::sync::LazyLock<FoldedLists> = std::sync::LazyLock::new(|| {
    let fold_all = |list: &[&str]| list.iter().map(|w| fold::compact(w)).collect();
    FoldedLists {
        neutral: fold_all(NEUTRAL),
        postal: fold_all(POSTAL),
        pin: fold::compact("pin"),
        pin_tails: fold_all(PIN_NAME_TAILS),
        pin_codes: fold_all(PIN_CODES),
    }
});

fn reason(field: &Field, term: &str, place: Option<&str>) -> String {
    let term = match place {
        Some(place) => format!("{term}, {place}"),
        None => term.to_owned(),
    };
    format!(
        "field \"{}\" asks for a secret ({term}); MCP forbids secrets in form mode",
        field.name
    )
}
