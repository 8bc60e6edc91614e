//! The asker's side of elicitd: reach the broker, open a session, submit
//! forms and wait for their outcome across daemon restarts. Used by the
//! `elicit` command, the stdio proxy, the tests and the benchmarks.
//!
//! * [`connect`] — the session bus, a discovered bus, or the asker socket;
//! * [`discovery`] — finding the broker when the host hid the bus;
//! * [`ClientSession`] — one session and its forms.

mod connect;
pub mod discovery;
mod session;

pub use connect::{ASKER_ADDRESS_PREFIX, connect};
pub use session::{ClientSession, FormEvent, Outcome};
