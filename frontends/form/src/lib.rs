//! `elicit-form`: the form model every elicitd front-end renders.
//!
//! A front-end builds a [`FormModel`] from the [`elicit_mcp::Form`] of a
//! presented request, draws each [`FieldState`] by its [`Input`], feeds the
//! user's edits back through the model's methods and, when the user
//! answers, sends the [`elicit_mcp::Answer`] the model produced.
//!
//! The model owns everything that is not drawing: the text being typed and
//! its cursor, parsing that text into a JSON value, defaults, required
//! markers, the error of each field (checked with proto's own
//! [`elicit_mcp::validate_answer`], so a front-end never disagrees with
//! the daemon), when an error should be shown, and the daemon's per-field
//! errors merged back in. [`UrlView`] does the same for URL mode: the parts
//! of the URL to highlight and the warnings to show.
//!
//! No UI toolkit is used here, so the terminal and the GTK front-ends share
//! one behaviour.

mod asker;
mod errors;
mod field;
mod hint;
mod model;
mod shown;
mod text;
mod url_view;

pub use asker::{host_name, server_name};
pub use errors::parse_field_errors;
pub use field::{FieldState, Input, MultiInput};
pub use hint::kind_hint;
pub use model::FormModel;
pub use shown::{Body, read_request};
pub use text::TextInput;
pub use url_view::{UrlView, UrlWarning};
