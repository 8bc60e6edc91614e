//! The elicitd broker and the building blocks of the `elicit` command.
//!
//! * [`broker`] — sessions, the sled-backed queue, dispatch to front-ends;
//! * [`bus`] — the D-Bus objects that expose the broker;
//! * [`asker`] — the asker-only socket for remote agents;
//! * [`store`] — what survives a restart;
//! * [`durable`] — what makes the store survive a power cut;
//! * [`config`] — `config.toml`;
//! * [`client`] — the client side used by `elicit ask` and the proxy;
//! * [`lifecycle`] — the state directory's lock, PID and log files.

pub mod answers;
pub mod asker;
pub mod broker;
pub mod bus;
pub mod client;
pub mod config;
pub mod discovery;
pub mod durable;
pub mod launcher;
pub mod lifecycle;
pub mod logging;
pub mod paths;
pub mod proxy;
pub mod rules;
pub mod state_dir;
pub mod store;
