//! The D-Bus objects of the daemon: thin adapters that identify the caller
//! and hand over to the driver ([`crate::driver::Handle`]).

mod bounded;
mod bounds;
mod broker_iface;
mod connect;
mod name_owner;
mod refused;
mod request_iface;
pub mod sandbox;
mod session_iface;
mod walk;
mod watch;

pub use bounded::Bounded;
pub use broker_iface::BrokerIface;
pub use connect::{bounded_split, connect, message_cap};
pub use name_owner::name_taken;
pub use refused::{REFUSED_PATH, Refused};
pub use request_iface::RequestIface;
pub use session_iface::SessionIface;
pub use watch::watch_departures;

use elicit_proto::Error;

/// Reads a form id given as text.
fn form_id(text: &str) -> Result<u64, Error> {
    text.parse()
        .map_err(|_| Error::BadArgument(format!("{text:?} is not a form id")))
}
