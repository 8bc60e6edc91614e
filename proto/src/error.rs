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
    /// The pending forms of every session together hold as many bytes as
    /// the broker keeps (`broker.forms-total-bytes`); nothing was stored,
    /// and the same form may be sent again once others have ended.
    OverBudget(String),
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
    /// The daemon is stopping and answered no more: the call may or may
    /// not have been carried out, so a client tries it again (a submission
    /// under the same submission id) with the next daemon rather than
    /// giving up.
    Stopping(String),
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
            Error::OverBudget(detail) => write!(f, "over the broker's byte budget: {detail}"),
            Error::AccessDenied(detail) => write!(f, "access denied: {detail}"),
            Error::NotFound(detail) => write!(f, "not found: {detail}"),
            Error::WrongState(detail) => write!(f, "wrong state: {detail}"),
            Error::BadArgument(detail) => write!(f, "bad argument: {detail}"),
            Error::Storage(detail) => write!(f, "storage failed: {detail}"),
            Error::Stopping(detail) => write!(f, "the daemon is stopping: {detail}"),
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
            Error::LimitExceeded(_) | Error::OverBudget(_) | Error::AccessDenied(_) => {
                JsonRpcCode::SERVER_ERROR
            }
            Error::NotFound(_)
            | Error::WrongState(_)
            | Error::Storage(_)
            | Error::Stopping(_)
            | Error::Bus(_) => JsonRpcCode::INTERNAL_ERROR,
        }
    }

    /// Whether the broker is gone or going rather than refusing: the bus
    /// failed, or the daemon is stopping. A front-end keeps its form and a
    /// client waits for the next daemon; nothing the caller sent was
    /// judged wrong.
    pub fn broker_unreachable(&self) -> bool {
        matches!(self, Error::Stopping(_) | Error::Bus(_))
    }

    /// What a person asking through the broker is told: a broker that is
    /// gone or going is not reachable (it may not run); one that answered
    /// but could not store the form says so and why; anything else is a
    /// refusal, in the broker's words. The one place an asker's error
    /// becomes a sentence (`elicit ask`, the proxy's replies to servers).
    pub fn explained(&self) -> String {
        match self {
            Error::Storage(detail) => format!("elicitd could not store the form: {detail}"),
            Error::Stopping(_) | Error::Bus(_) => format!("cannot reach elicitd (is it running?): {self}"),
            other => format!("elicitd refused the request: {other}"),
        }
    }

    /// The text without the variant's prefix, as sent over D-Bus.
    pub fn detail(&self) -> String {
        match self {
            Error::InvalidRequest(s)
            | Error::InvalidAnswer(s)
            | Error::LimitExceeded(s)
            | Error::OverBudget(s)
            | Error::AccessDenied(s)
            | Error::NotFound(s)
            | Error::WrongState(s)
            | Error::BadArgument(s)
            | Error::Storage(s)
            | Error::Stopping(s) => s.clone(),
            Error::Bus(e) => e.to_string(),
        }
    }
}

impl From<SchemaErrors> for Error {
    fn from(errors: SchemaErrors) -> Self {
        Error::InvalidRequest(errors.to_string())
    }
}

#[cfg(test)]
mod tests {
    use zbus::DBusError;

    use super::Error;

    /// The error a stopping daemon replies with, as its client receives it.
    fn received(name: &str, text: &str) -> Error {
        let call = zbus::Message::method_call("/dev/elicitd/Broker", "ListForms")
            .and_then(|builder| builder.build(&()))
            .expect("a method call");
        let name = zbus::names::OwnedErrorName::try_from(name).expect("an error name");
        Error::from(zbus::Error::MethodError(name, Some(text.to_owned()), call))
    }

    #[test]
    fn stopping_crosses_the_bus_as_its_own_name_and_counts_as_unreachable() {
        let sent = Error::Stopping("its driver has ended".into());
        assert_eq!(sent.name().as_str(), "dev.elicitd.Error.Stopping");
        let back = received("dev.elicitd.Error.Stopping", "its driver has ended");
        assert!(
            matches!(&back, Error::Stopping(text) if text == "its driver has ended"),
            "{back:?}"
        );
        assert!(back.broker_unreachable());
    }

    #[test]
    fn each_kind_of_failure_is_explained_as_what_it_is() {
        let storage = received(
            "dev.elicitd.Error.Storage",
            "No space left on device (os error 28)",
        );
        assert_eq!(
            storage.explained(),
            "elicitd could not store the form: No space left on device (os error 28)"
        );
        let gone = received("org.freedesktop.DBus.Error.ServiceUnknown", "no elicitd");
        assert!(
            gone.explained().starts_with("cannot reach elicitd"),
            "{}",
            gone.explained()
        );
        let limit = received("dev.elicitd.Error.LimitExceeded", "too many forms");
        assert_eq!(
            limit.explained(),
            "elicitd refused the request: limit exceeded: too many forms"
        );
    }

    #[test]
    fn a_refusal_is_not_unreachable() {
        let storage = received("dev.elicitd.Error.Storage", "No space left on device");
        assert!(matches!(storage, Error::Storage(_)), "{storage:?}");
        assert!(!storage.broker_unreachable());
        let unknown = received("org.freedesktop.DBus.Error.NoReply", "gone");
        assert!(matches!(unknown, Error::Bus(_)), "{unknown:?}");
        assert!(unknown.broker_unreachable());
    }
}
