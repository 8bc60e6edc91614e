//! `elicit-tui`: the terminal front-end of elicitd.
//!
//! It registers with the broker as the front-end `tui`, shows the forms the
//! broker presents to it, one per asking session, and sends the user's
//! answers back. `--plain` asks line by line instead, for screen readers
//! and dumb terminals.

use std::ops::ControlFlow;
use std::process::ExitCode;

use elicit_tui::{Args, run};

fn main() -> ExitCode {
    // First, before any thread: see `elicit_i18n::init`.
    elicit_i18n::init();
    let args = match elicit_link::parse::<Args>(|args| &args.docs) {
        ControlFlow::Continue(args) => args,
        ControlFlow::Break(status) => return status,
    };
    elicit_link::startup::block_on("elicit-tui", 2, run(args))
}
