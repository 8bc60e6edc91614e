//! The normalised form description that front-ends render.
//!
//! A front-end never reads JSON Schema: it walks [`Form::fields`] in order
//! and draws each [`Field`] by its [`FieldKind`].

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// A checked form: its fields in the order the server listed them.
#[derive(Debug, Clone, Serialize)]
pub struct Form {
    /// The fields, in the server's order.
    pub fields: Vec<Field>,
}

impl Form {
    /// The content a user who changes nothing would send: every default.
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|field| Some((field.name.clone(), field.default.clone()?)))
            .collect()
    }

    /// The field called `name`, if the form has one.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// True for a pure confirmation (no fields at all).
    pub fn is_confirmation(&self) -> bool {
        self.fields.is_empty()
    }
}

/// One field of a form.
#[derive(Debug, Clone, Serialize)]
pub struct Field {
    /// The property name: the key of the answer's content.
    pub name: String,
    /// What to show beside the field: the `title`, else the name.
    pub label: String,
    /// Help text: the `description`, if any.
    pub help: Option<String>,
    /// Whether the answer must contain this field.
    pub required: bool,
    /// The pre-filled value, already checked against the field.
    pub default: Option<Value>,
    /// What kind of input this is, with its constraints.
    pub kind: FieldKind,
}

/// The kinds of input the MCP subset allows, with their constraints.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FieldKind {
    /// Free text, optionally of a format and within lengths and a pattern.
    Text {
        /// A format the text must have.
        format: Option<TextFormat>,
        /// Least number of characters (Unicode scalar values).
        min_length: Option<u64>,
        /// Greatest number of characters.
        max_length: Option<u64>,
        /// An ECMA-262 pattern the text must contain a match of.
        pattern: Option<Pattern>,
    },
    /// A number; `integer` asks for a whole number.
    Number {
        /// Only whole numbers are allowed.
        integer: bool,
        /// Least allowed value (inclusive).
        minimum: Option<f64>,
        /// Greatest allowed value (inclusive).
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// Exactly one of a list of choices.
    Choice {
        /// The choices, in order.
        choices: Vec<Choice>,
    },
    /// Any number of a list of choices, within item counts.
    MultiChoice {
        /// The choices, in order.
        choices: Vec<Choice>,
        /// Least number of items to pick.
        min_items: Option<u64>,
        /// Greatest number of items to pick.
        max_items: Option<u64>,
    },
}

impl FieldKind {
    /// A short name of the kind, as `elicit check` prints it.
    pub fn name(&self) -> &'static str {
        match self {
            FieldKind::Text { format: None, .. } => "text",
            FieldKind::Text {
                format: Some(format), ..
            } => format.name(),
            FieldKind::Number { integer: true, .. } => "integer",
            FieldKind::Number { integer: false, .. } => "number",
            FieldKind::Boolean => "boolean",
            FieldKind::Choice { .. } => "choice",
            FieldKind::MultiChoice { .. } => "multi-choice",
        }
    }
}

/// One choice of a select field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// What goes into the answer.
    pub value: String,
    /// What the user sees (`title`, `enumNames`, else the value).
    pub label: String,
}

/// The string formats of the MCP subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    /// An email address (RFC 5321 / 5322 mailbox).
    Email,
    /// An absolute URI (RFC 3986).
    Uri,
    /// A calendar date, `YYYY-MM-DD` (RFC 3339 full-date).
    Date,
    /// A date and time with an offset (RFC 3339 date-time).
    DateTime,
}

impl TextFormat {
    /// The JSON Schema name of the format.
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }

    /// A hint to show users what to type.
    pub fn hint(self) -> &'static str {
        match self {
            TextFormat::Email => "name@example.com",
            TextFormat::Uri => "https://example.com/path",
            TextFormat::Date => "YYYY-MM-DD",
            TextFormat::DateTime => "YYYY-MM-DDTHH:MM:SS+00:00",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "email" => TextFormat::Email,
            "uri" => TextFormat::Uri,
            "date" => TextFormat::Date,
            "date-time" => TextFormat::DateTime,
            _ => return None,
        })
    }
}

/// An ECMA-262 pattern: its source only.
///
/// It is matched by a linear-time translation (see `pattern.rs`), never by
/// backtracking, so no pattern a server sends can stall a check. The
/// compiled program is not kept here: it can be a thousand times the
/// source (`.{750}` compiles to 1 MB), so a form would cost what its
/// patterns compile to rather than what it says. Matching compiles on
/// demand through a small cache shared by every form (`pattern_cache.rs`).
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
}

impl Pattern {
    /// Checks that `source` compiles; the compiled program may stay in the
    /// shared cache, not here.
    pub(crate) fn compile(source: &str) -> Result<Self, crate::pattern::PatternError> {
        crate::pattern_cache::compiled(source)?;
        Ok(Pattern {
            source: source.to_owned(),
        })
    }

    /// A pattern that compiled when its request was first checked.
    pub(crate) fn checked(source: String) -> Self {
        Pattern { source }
    }

    /// The pattern as the server wrote it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// JSON Schema semantics: the pattern is not anchored, a match anywhere
    /// in the text counts. A pattern that no longer compiles (read back
    /// from the store after its limits shrank) matches nothing, so no
    /// answer passes a check it cannot make.
    pub fn is_match(&self, text: &str) -> bool {
        crate::pattern_cache::is_match(&self.source, text)
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}
