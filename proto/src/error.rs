//! Errors, and their one mapping to D-Bus error names and JSON-RPC codes.

use std::fmt;

use zbus::message::{Header, Message};
use zbus::names::ErrorName;

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
/// It is the single place where errors meet the two wire formats:
/// [`Error::dbus_name`] (D-Bus error names under `dev.elicitd.Error.`) and
/// [`Error::jsonrpc_code`] (JSON-RPC codes for the proxy).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request falls outside the MCP elicitation subset.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The answer does not fit its request; the text is a JSON array of
    /// `{"field", "message"}` objects, so that front-ends can place them.
    #[error("invalid answer: {0}")]
    InvalidAnswer(String),
    /// A size or count limit was reached; nothing was stored.
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
    /// The caller may not do this to this object.
    #[error("access denied: {0}")]
    AccessDenied(String),
    /// No such form, session or front-end.
    #[error("not found: {0}")]
    NotFound(String),
    /// The form is no longer in a state that allows this.
    #[error("wrong state: {0}")]
    WrongState(String),
    /// A malformed argument other than a request or an answer.
    #[error("bad argument: {0}")]
    BadArgument(String),
    /// The durable store failed.
    #[error("storage failed: {0}")]
    Storage(String),
    /// The bus itself failed, or a reply carried an unknown error.
    #[error("D-Bus: {0}")]
    Bus(#[from] zbus::Error),
}

const PREFIX: &str = "dev.elicitd.Error.";

impl Error {
    /// The D-Bus error name, `dev.elicitd.Error.<Variant>`.
    pub fn dbus_name(&self) -> String {
        let short = match self {
            Error::InvalidRequest(_) => "InvalidRequest",
            Error::InvalidAnswer(_) => "InvalidAnswer",
            Error::LimitExceeded(_) => "LimitExceeded",
            Error::AccessDenied(_) => "AccessDenied",
            Error::NotFound(_) => "NotFound",
            Error::WrongState(_) => "WrongState",
            Error::BadArgument(_) => "BadArgument",
            Error::Storage(_) => "Storage",
            Error::Bus(_) => "Bus",
        };
        format!("{PREFIX}{short}")
    }

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

    /// Rebuilds the error a daemon sent as a D-Bus error reply.
    pub fn from_dbus(error: zbus::Error) -> Self {
        let zbus::Error::MethodError(name, description, _) = &error else {
            return Error::Bus(error);
        };
        let detail = description.clone().unwrap_or_default();
        match name.as_str().strip_prefix(PREFIX) {
            Some("InvalidRequest") => Error::InvalidRequest(detail),
            Some("InvalidAnswer") => Error::InvalidAnswer(detail),
            Some("LimitExceeded") => Error::LimitExceeded(detail),
            Some("AccessDenied") => Error::AccessDenied(detail),
            Some("NotFound") => Error::NotFound(detail),
            Some("WrongState") => Error::WrongState(detail),
            Some("BadArgument") => Error::BadArgument(detail),
            Some("Storage") => Error::Storage(detail),
            _ => Error::Bus(error),
        }
    }
}

impl From<SchemaErrors> for Error {
    fn from(errors: SchemaErrors) -> Self {
        Error::InvalidRequest(errors.to_string())
    }
}

impl zbus::DBusError for Error {
    fn create_reply(&self, call: &Header<'_>) -> zbus::Result<Message> {
        let name = ErrorName::try_from(self.dbus_name())?;
        Message::error(call, name)?.build(&(self.detail(),))
    }

    fn name(&self) -> ErrorName<'_> {
        // Every name built by `dbus_name` is valid; fall back to a generic
        // fdo name rather than panic should that ever change.
        ErrorName::try_from(self.dbus_name())
            .unwrap_or_else(|_| ErrorName::from_static_str_unchecked("org.freedesktop.DBus.Error.Failed"))
    }

    fn description(&self) -> Option<&str> {
        None
    }
}
