//! `elicit-link`: what every elicitd front-end does on the bus, written
//! once, so that a front-end is its rendering and nothing else.
//!
//! A front-end describes itself with a [`Profile`], takes forms through
//! the [`Frontend`] trait (the `dev.elicitd.Frontend1` interface: `Show`
//! and `Withdraw`), hears about the broker through the [`Observer`] trait,
//! and answers through the [`Link`] that [`Link::connect`] returns:
//!
//! * the broker is believed only after it proves itself
//!   ([`elicit_proto::trust`]): the first registration is with the current
//!   owner of the name (`OpenFrontend`), every later one only with an owner
//!   that proves it knows the registration secret (`ProveFrontend`, then
//!   `ResumeFrontend`), and `Frontend1` takes calls from that broker alone;
//! * when the broker's name changes owner (a restart), the link forgets the
//!   old broker at once and registers with the new one;
//! * answers go out with the action's bus word ([`elicit_proto::Action`]);
//! * [`Forward`] turns the two traits into [`LinkEvent`]s for a front-end
//!   that takes everything on one channel;
//! * [`Entry`] keeps a presented form for the user interface, and
//!   [`Command`] carries what the user decided back to the bus side;
//! * [`BusArgs`], [`DocsArgs`] and [`startup`] hold the options and the few lines
//!   every front-end's `main` shares.

mod args;
mod backlog;
mod command;
mod entry;
mod error;
mod events;
mod frontend;
mod link;
mod observer;
mod profile;
mod serve;
pub mod startup;

pub use args::{BusArgs, DocsArgs, parse};
pub use backlog::backlog;
pub use command::Command;
pub use entry::Entry;
pub use error::{LinkError, ShuttingDown};
pub use events::{Forward, LinkEvent};
pub use frontend::{Frontend, ShowRequest};
pub use link::Link;
pub use observer::{Observer, OwnerChange};
pub use profile::{CAPABILITIES, Profile};
