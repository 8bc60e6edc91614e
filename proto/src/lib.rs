//! `elicit-proto`: the D-Bus half of the contract every elicitd process
//! shares, over the serde-only [`elicit_mcp`].
//!
//! * [`dbus`] — the bus names, paths and proxies, and the `a{sv}` form of
//!   an [`Origin`];
//! * [`Error`] — the one error type that maps to D-Bus and JSON-RPC errors;
//! * [`trust`] — telling the real broker from a program that took its name;
//! * [`paths`] — where the daemon keeps its files.
//!
//! Everything of [`elicit_mcp`] (requests, forms, answers, limits, …) is
//! re-exported here, so that a process that speaks on the bus needs this
//! crate alone.

// zbus::proxy generates signal-argument structs and accessors without docs.
#[allow(missing_docs)]
pub mod dbus;
#[cfg(feature = "docgen")]
pub mod docgen;
mod error;
pub mod paths;
pub mod trust;

pub use elicit_mcp::*;
pub use error::Error;
