//! `elicitd-policy`: the policy engine of elicitd.
//!
//! Rules are small [Rhai](https://rhai.rs) scripts in `rules.d`
//! directories (polkit's model); each registers named rules that look at an
//! elicitation and the origin that sent it and answer for the human —
//! decline, cancel, accept with content — or pass. See `RULES.md` beside
//! this crate for the rule API.
//!
//! * [`Policy`] — the loaded rules; [`Policy::decide`] and
//!   [`Policy::decide_with`] give a [`Decision`], [`Policy::check`] lints;
//! * [`PolicyWatcher`] — reloads the rules when their directories change;
//! * [`Remembered`] — "always, for this server" choices, applied before the
//!   rules;
//! * [`Budget`] — what a rule may spend before it counts as failed;
//! * [`SecretGuard`] — the built-in guard that declines forms asking for
//!   secrets, before remembered choices and rules, whatever they do.
//!
//! Every call is synchronous and may run a script for up to the budget's
//! time; an async caller runs it on a blocking thread, or first tries
//! [`Policy::decide_among_within`], which gives up after a bound of its
//! choosing.

#![warn(missing_docs)]

mod budget;
mod error;
mod guard;
mod helpers;
mod outcome;
mod policy;
mod remember;
mod sandbox;
mod sources;
mod verdict;
mod view;
mod watch;

pub use budget::Budget;
pub use error::PolicyError;
pub use guard::SecretGuard;
pub use policy::Policy;
pub use remember::{Remembered, RememberedChoice};
pub use verdict::{Decision, Verdict};
pub use watch::PolicyWatcher;
