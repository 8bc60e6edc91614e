//! The `elicit-tui` program: the terminal front-end of elicitd.
//!
//! It registers with the broker as the front-end `tui`, shows the forms the
//! broker presents to it, one per asking session, and sends the user's
//! answers back. `--plain` asks line by line instead, for screen readers
//! and dumb terminals.

use std::ops::ControlFlow;
use std::process::ExitCode;

use crate::{Args, run};

/// The `elicit-tui` program: what `src/main.rs` runs, and what the packages'
/// multi-call binary (`packaging/multicall`) runs when started as
/// `elicit-tui`.
pub fn main() -> ExitCode {
    // First, before any thread: see `elicit_i18n::init`.
    elicit_i18n::init();
    let args = match elicit_link::parse::<Args>(|args| &args.docs) {
        ControlFlow::Continue(args) => args,
        ControlFlow::Break(status) => return status,
    };
    elicit_link::startup::block_on("elicit-tui", 2, run(args))
}
