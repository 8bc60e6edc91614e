//! The built-in secret guard: declines a form that asks for a secret.
//!
//! MCP forbids secrets (passwords, API keys, tokens, payment data) in form
//! mode. The guard is Rust, not a rule: it runs before remembered choices
//! and before every rules file, so no rule that throws, runs out of budget
//! or is ordered first can keep a secret-asking form from being declined.
//! Only the configuration switches it off ([`SecretGuard::Off`]).
//!
//! Every field is read except a yes/no one, which holds one bit: text
//! and number fields, and choice fields too, since picking "the first
//! digit of your PIN" from ten digits gives the PIN away as surely as
//! typing it. A field is judged by its name (split into words, with the
//! short forms programmers use: `db_pass`, `apiKey`, `PIN1`), its title
//! and its description, each on its own and each also read with its
//! leetspeak undone (`p4ssw0rd`): a harmless name never excuses a
//! description that asks for the secret. Besides the names of secrets in
//! thirty languages ([`languages`]), descriptions of one count: how it was
//! sent, where it is printed, the file it lives in ([`described`]). When
//! the name and title say nothing (`value`, `input`), or the field's
//! choices are single characters (a secret picked piece by piece), the
//! form's message is judged for it too, and so are the choices' labels.
//!
//! The guard fails closed: it runs before every rule and cannot be made to
//! fail; a field whose text it cannot read (a title or description that is
//! not a string) counts as asking for a secret.

mod described;
mod fold;
mod languages;
mod leet;
mod lists;
mod terms;

use elicit_proto::{Elicitation, Field, FieldKind, Mode, TextFormat};
use serde_json::Value;

pub(crate) use fold::split;
use fold::{Folded, fold, fold_identifier};
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
const PIN_NAME_TAILS: &[&str] = &["code", "number", "nummer", "numero", "kod", "digit", "digits"];

/// A PIN code in any case, in any text: "PIN-Code", "pincode", "пин-код".
const PIN_CODES: &[&str] = &["pin code", "pincode", "пин код", "пинкод"];

/// Choices that make a choice field a yes/no question.
const YES_NO: &[&str] = &[
    "yes", "no", "y", "n", "true", "false", "ok", "cancel", "always", "never", "on", "off", "later",
];

/// Why `request` must be declined, or `None` when it asks for no secret.
pub(crate) fn inspect(request: &Elicitation) -> Option<String> {
    let Mode::Form(form) = &request.mode else {
        return None;
    };
    let mut message: Option<Vec<Folded>> = None;
    for field in &form.fields {
        let Some(kind) = judged(field) else {
            continue;
        };
        if raw_text(request, field, "format") == Some("password") {
            return Some(reason(field, "format password", None));
        }
        if let Some(key) = unreadable(request, field) {
            return Some(reason(field, &format!("a {key} the guard cannot read"), None));
        }
        let raw_title = raw_text(request, field, "title");
        let mut name = vec![fold_identifier(&field.name)];
        name.extend(leet::unleet(&field.name).map(|plain| fold(&plain)));
        let title = raw_title.map(readings).unwrap_or_default();
        let description = raw_text(request, field, "description")
            .map(readings)
            .unwrap_or_default();
        if let Some((term, place)) = find_in_name(&name).map(|term| (term, "in its name")) {
            return Some(reason(field, term, Some(place)));
        }
        for (place, texts) in [("in its title", &title), ("in its description", &description)] {
            if let Some(term) = texts.iter().find_map(find) {
                return Some(reason(field, term, Some(place)));
            }
        }
        let pieces = kind == Kind::Pieces;
        let message = (pieces || neutral(&field.name) && raw_title.is_none_or(neutral))
            .then(|| &*message.get_or_insert_with(|| readings(&request.message)));
        let labels: Vec<Folded> = if pieces { labels(field) } else { Vec::new() };
        let mut spoken: Vec<&Folded> = title.iter().chain(&description).chain(&labels).collect();
        spoken.extend(message.into_iter().flatten());
        if let Some(term) = pin(&name[0], &spoken) {
            return Some(reason(field, term, None));
        }
        let asked = message
            .into_iter()
            .flatten()
            .map(|m| ("in the form's message", m))
            .chain(labels.iter().map(|l| ("in its choices", l)));
        for (place, text) in asked {
            if let Some(term) = find(text) {
                return Some(reason(field, term, Some(place)));
            }
        }
    }
    None
}

/// How a field is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Free text, a number, or a choice of the server's words.
    Whole,
    /// A choice of single characters: a piece of something longer.
    Pieces,
}

/// How `field` is judged, or `None` when it cannot carry a secret: a
/// yes/no field (one bit), a choice between yes and no, an email or a
/// date.
fn judged(field: &Field) -> Option<Kind> {
    let choices = match &field.kind {
        FieldKind::Text { format, .. } => {
            let fixed = matches!(
                format,
                Some(TextFormat::Email | TextFormat::Date | TextFormat::DateTime)
            );
            return (!fixed).then_some(Kind::Whole);
        }
        FieldKind::Number { .. } => return Some(Kind::Whole),
        FieldKind::Boolean => return None,
        FieldKind::Choice { choices } | FieldKind::MultiChoice { choices, .. } => choices,
    };
    let yes_no = choices
        .iter()
        .all(|c| FOLDED.yes_no.contains(&fold::compact(&c.value)));
    if yes_no {
        return None;
    }
    let single = |text: &str| text.trim().chars().count() == 1;
    let pieces = choices.len() > 1 && choices.iter().all(|c| single(&c.value) || single(&c.label));
    Some(if pieces { Kind::Pieces } else { Kind::Whole })
}

/// The labels of a choice field's choices, each folded.
fn labels(field: &Field) -> Vec<Folded> {
    match &field.kind {
        FieldKind::Choice { choices } | FieldKind::MultiChoice { choices, .. } => {
            choices.iter().map(|c| fold(&c.label)).collect()
        }
        _ => Vec::new(),
    }
}

/// `text` folded as written and, when it has leetspeak, as spelt.
fn readings(text: &str) -> Vec<Folded> {
    let mut out = vec![fold(text)];
    out.extend(leet::unleet(text).map(|plain| fold(&plain)));
    out
}

/// The secret a title, description, message or label names or describes.
fn find(text: &Folded) -> Option<&'static str> {
    LEXICON.find(text).or_else(|| described::find(text))
}

/// The secret a field's identifier names, its leetspeak undone too.
fn find_in_name(name: &[Folded]) -> Option<&'static str> {
    name.iter()
        .find_map(|n| LEXICON.find_in_name(n).or_else(|| described::find(n)))
}

/// The key (`title`, `description`) of `field` that is there but is not a
/// string: the guard cannot read it, so it counts as asking for a secret.
fn unreadable(request: &Elicitation, field: &Field) -> Option<&'static str> {
    let property = request
        .raw
        .get("requestedSchema")?
        .get("properties")?
        .get(&field.name)?;
    ["title", "description"]
        .into_iter()
        .find(|key| property.get(key).is_some_and(|v| !v.is_string()))
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
fn pin(name: &Folded, texts: &[&Folded]) -> Option<&'static str> {
    if postal(texts) {
        return None;
    }
    // `PIN1`, `pin_2`: the digits number the PIN's pieces.
    let words: Vec<&str> = name
        .words
        .iter()
        .filter(|w| !w.number)
        .map(|w| w.folded.as_str())
        .collect();
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
    if named || texts.iter().copied().any(|text| pin_code(&text)) {
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
    yes_no: Vec<String>,
}

static FOLDED: std::sync::LazyLock<FoldedLists> = std::sync::LazyLock::new(|| {
    let fold_all = |list: &[&str]| list.iter().map(|w| fold::compact(w)).collect();
    FoldedLists {
        neutral: fold_all(NEUTRAL),
        postal: fold_all(POSTAL),
        pin: fold::compact("pin"),
        pin_tails: fold_all(PIN_NAME_TAILS),
        pin_codes: fold_all(PIN_CODES),
        yes_no: fold_all(YES_NO),
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
