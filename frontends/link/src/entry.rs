//! One presented form, as a front-end's user interface keeps it.

use elicit_form::{Body, FormModel, read_request};
use elicit_proto::Origin;

use crate::ShowRequest;

/// A form the broker presented to this front-end: what the `Show` call
/// said, read into a [`Body`], and where its answer stands.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The broker's form id.
    pub form: String,
    /// The presentation token.
    pub token: String,
    /// Who asks.
    pub origin: Origin,
    /// The asking session.
    pub session: String,
    /// When it was queued (ms since the epoch).
    pub queued_at_ms: u64,
    /// When it times out (ms since the epoch), 0 for never.
    pub deadline_ms: u64,
    /// What the server says to the user.
    pub message: String,
    /// What it asks for.
    pub body: Body,
    /// An answer is on its way to the broker: input waits.
    pub sending: bool,
    /// A line about this form (a refused answer, a browser that failed).
    pub status: Option<String>,
}

impl Entry {
    /// The entry for a `Show` call.
    pub fn new(show: ShowRequest) -> Self {
        let (message, body) = read_request(&show.request_json);
        Entry {
            form: show.form,
            token: show.token,
            origin: show.origin,
            session: show.session,
            queued_at_ms: show.queued_at_ms,
            deadline_ms: show.deadline_ms,
            message,
            body,
            sending: false,
            status: None,
        }
    }

    /// The server's name, for headings: as the asker sent it.
    pub fn server(&self) -> String {
        elicit_form::server_name(&self.origin)
    }

    /// The host's (agent's) name, for headings: as the asker sent it.
    pub fn host(&self) -> String {
        elicit_form::host_name(&self.origin)
    }

    /// The form model, in form mode.
    pub fn model(&self) -> Option<&FormModel> {
        match &self.body {
            Body::Form(model) => Some(model),
            _ => None,
        }
    }

    /// The form model to edit, in form mode.
    pub fn model_mut(&mut self) -> Option<&mut FormModel> {
        match &mut self.body {
            Body::Form(model) => Some(model),
            _ => None,
        }
    }
}
