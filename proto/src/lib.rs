//! `elicit-proto`: the contract every elicitd process shares.
//!
//! * [`Elicitation`] — an `elicitation/create` request (form or URL mode),
//!   checked against the MCP schema subset of all three protocol eras and
//!   normalised into a [`Form`] that front-ends render without knowing JSON
//!   Schema;
//! * [`validate_answer`] — an answer checked against its request, with errors
//!   per field;
//! * [`Limits`] — the size limits every check applies;
//! * [`Action`] — accept, decline or cancel, one word each on the bus;
//! * [`Error`] — the one error type that maps to D-Bus and JSON-RPC errors;
//! * [`text`] — text from outside made safe to print on a terminal.

mod action;
mod answer;
// zbus::proxy generates signal-argument structs and accessors without docs.
#[allow(missing_docs)]
pub mod dbus;
#[cfg(feature = "docgen")]
pub mod docgen;
mod error;
mod form;
mod formats;
mod limits;
pub mod paths;
mod pattern;
mod request;
mod schema;
pub mod text;
pub mod trust;

pub use action::{Action, UnknownAction};
pub use answer::{Answer, FieldError, validate_answer};
pub use error::{Error, JsonRpcCode, Location, SchemaError, SchemaErrors};
pub use form::{Choice, Field, FieldKind, Form, Pattern, TextFormat};
pub use limits::Limits;
pub use request::{Elicitation, Mode};
pub use rmcp::model::{ElicitResult, ElicitationAction};
