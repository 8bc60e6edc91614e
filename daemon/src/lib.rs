//! The elicitd broker and the building blocks of the `elicit` command.
//!
//! * [`broker`] — sessions, the sled-backed queue, dispatch to front-ends;
//! * [`bus`] — the D-Bus objects that expose the broker;
//! * [`store`] — what survives a restart;
//! * [`config`] — `config.toml`;
//! * [`client`] — the client side used by `elicit ask` and the proxy.

pub mod answers;
pub mod broker;
pub mod bus;
pub mod client;
pub mod config;
pub mod launcher;
pub mod logging;
pub mod paths;
pub mod proxy;
pub mod rules;
pub mod state_dir;
pub mod store;
