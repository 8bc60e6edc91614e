//! The stand-in for a call too large to read ([`super::bounded`]): an
//! object that answers every call with the refusal it was given, and the
//! refusal's wording.

use elicit_proto::Error;
use elicit_proto::origin_field_refusal;
use zbus::Message;

use super::bounded::{Fields, PrimaryParts, longest};
use super::walk::Report;

/// Where the stand-in calls go, on the bus connection and on each
/// asker-socket connection.
pub const REFUSED_PATH: &str = "/dev/elicitd/Refused";

/// Answers each stand-in call with its refusal. Anyone may call it
/// directly; they get their own words back as an error, nothing more.
#[derive(Debug, Default)]
pub struct Refused;

#[zbus::interface(name = "dev.elicitd.Refused1")]
impl Refused {
    /// Refuses with `reason`.
    async fn refuse(&self, reason: String) -> Result<(), Error> {
        Err(Error::LimitExceeded(reason))
    }
}

/// Why a message of `total` bytes, over `cap`, is refused: for
/// `OpenSession`, each origin field over its bound, as the method itself
/// would say; otherwise the call's size and its longest strings.
pub(super) fn reason(member: Option<&str>, total: u64, cap: usize, report: &Report) -> String {
    if member == Some("OpenSession") {
        let fields: Vec<String> = report
            .iter()
            .filter_map(|(key, len)| origin_field_refusal(key, usize::try_from(*len).unwrap_or(usize::MAX)))
            .collect();
        if !fields.is_empty() {
            return fields.join("; ");
        }
    }
    let mut reason = format!("the call is {total} bytes, more than the limit of {cap} for one call");
    let strings: Vec<String> = longest(report, 4)
        .into_iter()
        .map(|(at, len)| format!("'{}' is {len} bytes", elicit_proto::text::escape_controls(at)))
        .collect();
    if !strings.is_empty() {
        reason.push_str(": ");
        reason.push_str(&strings.join(", "));
    }
    reason
}

/// The small call zbus is handed instead of the message: a method call
/// becomes `Refuse(reason)` with the caller's serial and name, so that
/// the error reaches the caller as the answer to its call; anything else
/// becomes a signal nobody listens for.
pub(super) fn stand_in(header: &Fields, primary: &PrimaryParts, reason: String) -> zbus::Result<Message> {
    let serial = std::num::NonZeroU32::new(primary.serial).ok_or(zbus::Error::InvalidSerial)?;
    let mut builder = if primary.method_call {
        let mut builder = Message::method_call(REFUSED_PATH, "Refuse")?.interface("dev.elicitd.Refused1")?;
        if primary.no_reply {
            builder = builder.with_flags(zbus::message::Flags::NoReplyExpected)?;
        }
        builder
    } else {
        Message::signal(REFUSED_PATH, "dev.elicitd.Refused1", "Dropped")?
    };
    builder = builder.serial(serial);
    if let Some(sender) = &header.sender {
        builder = builder.sender(sender.as_str())?;
    }
    if let Some(destination) = &header.destination {
        builder = builder.destination(destination.as_str())?;
    }
    builder.build(&(reason,))
}
