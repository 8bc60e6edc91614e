//! Errors, and their one mapping to D-Bus error names and JSON-RPC codes.

use std::fmt;

/// Where in an `elicitation/create` request a problem sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The params object as a whole.
    Params,
    /// The `mode` member.
    Mode,
    /// The `message` member.
    Message,
    /// The `url` member (URL mode).
    Url,
    /// The `elicitationId` member (URL mode).
    ElicitationId,
    /// The `requestedSchema` object itself, outside any property.
    Schema,
    /// One property of `requestedSchema.properties`.
    Property(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Params => f.write_str("params"),
            Location::Mode => f.write_str("mode"),
            Location::Message => f.write_str("message"),
            Location::Url => f.write_str("url"),
            Location::ElicitationId => f.write_str("elicitationId"),
            Location::Schema => f.write_str("requestedSchema"),
            Location::Property(name) => write!(f, "property `{name}`"),
        }
    }
}

/// One reason a request falls outside the MCP elicitation subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// What the problem is attached to.
    pub location: Location,
    /// A stable, kebab-case name of the rule that was broken, for scripts.
    pub rule: &'static str,
    /// A sentence for people.
    pub detail: String,
}

impl SchemaError {
    pub(crate) fn new(location: Location, rule: &'static str, detail: impl Into<String>) -> Self {
        SchemaError {
            location,
            rule,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} [{}]", self.location, self.detail, self.rule)
    }
}

/// Every reason a request was refused, in the order they were found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SchemaErrors(pub Vec<SchemaError>);

impl fmt::Display for SchemaErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// JSON-RPC error codes used by the proxy.
pub struct JsonRpcCode;

impl JsonRpcCode {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a JSON-RPC message.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The params do not fit (a refused elicitation, an invalid answer).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Something failed inside the proxy or broker.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A server-defined error: the broker refused for a limit or access.
    pub const SERVER_ERROR: i64 = -32000;
    /// 2025-11-25: the request needs URL elicitations first.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
}

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
