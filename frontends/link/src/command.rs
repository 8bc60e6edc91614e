//! What a front-end's user interface asks its bus side to do.

use elicit_proto::Answer;

/// What the user decided, for the bus side to carry out.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send `answer` for `form`.
    Answer {
        /// The form id.
        form: String,
        /// Its presentation token.
        token: String,
        /// The answer.
        answer: Answer,
    },
    /// The user consented: open `url` in the browser, then accept.
    OpenUrl {
        /// The form id.
        form: String,
        /// Its presentation token.
        token: String,
        /// The URL, exactly as the request gave it.
        url: String,
    },
    /// Leave the program: the bus side stops serving.
    Quit,
}

impl Command {
    /// The form the command answers; none for [`Command::Quit`].
    pub fn form(&self) -> Option<&str> {
        match self {
            Command::Answer { form, .. } | Command::OpenUrl { form, .. } => Some(form),
            Command::Quit => None,
        }
    }
}
