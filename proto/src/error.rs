//! The one error type that crosses a process boundary, and its mapping to
//! D-Bus error names and JSON-RPC codes.

use std::fmt;

use elicit_mcp::{JsonRpcCode, SchemaErrors};

/// Every error that crosses a process boundary in elicitd.
///
/// It is the single place where errors meet the two wire formats: D-Bus
/// error names `dev.elicitd.Error.<Variant>` (zbus's `DBusError` derive,
/// which also turns such a reply back into its variant: a proxy call's
/// `zbus::Error` converts with `Error::from`) and
/// [`Error::jsonrpc_code`] (JSON-RPC codes for the proxy).
#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "dev.elicitd.Error", impl_display = false)]
pub enum Error {
    /// The request falls outside the MCP elicitation subset.
    InvalidRequest(String),
    /// The answer does not fit its request; the text is a JSON array of
    /// `{"field", "message"}` objects, so that front-ends can place them.
    InvalidAnswer(String),
    /// A size or count limit was reached; nothing was stored.
    LimitExceeded(String),
    /// The caller may not do this to this object.
    AccessDenied(String),
    /// No such form, session or front-end.
    NotFound(String),
    /// The form is no longer in a state that allows this.
    WrongState(String),
    /// A malformed argument other than a request or an answer.
    BadArgument(String),
    /// The durable store failed.
    Storage(String),
    /// The bus itself failed, or a reply carried an unknown error.
    #[zbus(error)]
    Bus(zbus::Error),
}

// By hand: the derive above implements `std::error::Error`, so thiserror's
// derive, which would do the same, cannot add the messages.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidRequest(detail) => write!(f, "invalid request: {detail}"),
            Error::InvalidAnswer(detail) => write!(f, "invalid answer: {detail}"),
            Error::LimitExceeded(detail) => write!(f, "limit exceeded: {detail}"),
            Error::AccessDenied(detail) => write!(f, "access denied: {detail}"),
            Error::NotFound(detail) => write!(f, "not found: {detail}"),
            Error::WrongState(detail) => write!(f, "wrong state: {detail}"),
            Error::BadArgument(detail) => write!(f, "bad argument: {detail}"),
            Error::Storage(detail) => write!(f, "storage failed: {detail}"),
            Error::Bus(detail) => write!(f, "D-Bus: {detail}"),
        }
    }
}

impl Error {
    /// The JSON-RPC error code the proxy answers with.
    pub fn jsonrpc_code(&self) -> i64 {
        match self {
            Error::InvalidRequest(_) | Error::InvalidAnswer(_) | Error::BadArgument(_) => {
                JsonRpcCode::INVALID_PARAMS
            }
            Error::LimitExceeded(_) | Error::AccessDenied(_) => JsonRpcCode::SERVER_ERROR,
            Error::NotFound(_) | Error::WrongState(_) | Error::Storage(_) | Error::Bus(_) => {
                JsonRpcCode::INTERNAL_ERROR
            }
        }
    }

    /// The text without the variant's prefix, as sent over D-Bus.
    pub fn detail(&self) -> String {
        match self {
            Error::InvalidRequest(s)
            | Error::InvalidAnswer(s)
            | Error::LimitExceeded(s)
            | Error::AccessDenied(s)
            | Error::NotFound(s)
            | Error::WrongState(s)
            | Error::BadArgument(s)
            | Error::Storage(s) => s.clone(),
            Error::Bus(e) => e.to_string(),
        }
    }
}

impl From<SchemaErrors> for Error {
    fn from(errors: SchemaErrors) -> Self {
        Error::InvalidRequest(errors.to_string())
    }
}
