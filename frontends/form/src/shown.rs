//! A presented request, read for display: its message and what it asks for.

use elicit_mcp::{Elicitation, Limits};

use crate::{FormModel, UrlView};

/// What a presented form asks for.
#[derive(Debug, Clone)]
pub enum Body {
    /// Fields to fill in (none for a confirmation).
    Form(Box<FormModel>),
    /// Consent to open a URL.
    Url(UrlView),
    /// A request this front-end cannot read (the broker checked it, so
    /// this is a version mismatch): it can only be declined or cancelled.
    Unreadable(String),
}

/// Reads the request JSON of a `Show` call: its message and its [`Body`].
/// The broker checked it, patterns included, so they are not compiled
/// again here: a shown form costs what its text says, and a pattern is
/// compiled (within the process's shared budget) only to check what the
/// user typed.
pub fn read_request(request_json: &str) -> (String, Body) {
    match Elicitation::parse_checked_str(request_json, &Limits::UNLIMITED) {
        Ok(request) => {
            let body = match (FormModel::from_request(&request), UrlView::from_request(&request)) {
                (Some(model), _) => Body::Form(Box::new(model)),
                (None, Some(view)) => Body::Url(view),
                (None, None) => Body::Unreadable("neither a form nor a URL".into()),
            };
            (request.message, body)
        }
        Err(errors) => (String::new(), Body::Unreadable(errors.to_string())),
    }
}
