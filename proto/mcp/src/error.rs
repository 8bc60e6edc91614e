//! What is wrong with a request (where, which rule), and the JSON-RPC
//! error codes; the D-Bus error mapping lives in `elicit-proto`.

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
