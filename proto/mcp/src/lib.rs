//! `elicit-mcp`: the part of elicitd's contract that is MCP and nothing
//! else, serde and no bus, so that the toolkit-free form model builds on it
//! alone.
//!
//! * [`Elicitation`] — an `elicitation/create` request (form or URL mode),
//!   checked against the MCP schema subset of all three protocol eras and
//!   normalised into a [`Form`] that front-ends render without knowing JSON
//!   Schema;
//! * [`validate_answer`] — an answer checked against its request, with errors
//!   per field;
//! * [`Limits`] — the size limits every check applies;
//! * [`Action`] — accept, decline or cancel, one word each on the bus;
//! * [`Origin`] — who asks, and how long each of its fields may be;
//! * [`SchemaErrors`] — why a request was refused, rule by rule;
//! * [`text`] — text from outside made safe to print on a terminal.
//!
//! `elicit-proto` adds the D-Bus side (names, proxies, the error mapping,
//! trust) and re-exports all of this.

mod action;
mod answer;
mod error;
mod form;
mod formats;
mod limits;
mod origin;
mod origin_limits;
mod pattern;
mod pattern_cache;
mod request;
mod schema;
pub mod text;

pub use action::{Action, UnknownAction};
pub use answer::{Answer, FieldError, validate_answer};
pub use error::{JsonRpcCode, Location, SchemaError, SchemaErrors};
pub use form::{Choice, Field, FieldKind, Form, Pattern, TextFormat};
pub use limits::Limits;
pub use origin::{Origin, is_icon_name};
pub use origin_limits::{
    MAX_ORIGIN_NAME_BYTES, MAX_ORIGIN_PATH_BYTES, origin_field_limit, origin_field_refusal,
};
pub use request::{Elicitation, Mode};
pub use rmcp::model::{ElicitResult, ElicitationAction};
