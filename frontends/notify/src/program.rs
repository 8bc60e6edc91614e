//! The `elicit-notify` program: the desktop-notification front-end of elicitd.
//!
//! It registers with the broker as the front-end `notify` and shows each
//! form presented to it as a desktop notification: confirmations and small
//! choices are answered from the notification's actions, anything richer
//! is handed to the next front-end with "Open…".

use std::ops::ControlFlow;
use std::process::ExitCode;

use crate::{Args, run};

/// The `elicit-notify` program: what `src/main.rs` runs, and what the packages'
/// multi-call binary (`packaging/multicall`) runs when started as
/// `elicit-notify`.
pub fn main() -> ExitCode {
    // First, before any thread: see `elicit_i18n::init`.
    elicit_i18n::init();
    let args = match elicit_link::parse::<Args>(|args| &args.docs) {
        ControlFlow::Continue(args) => args,
        ControlFlow::Break(status) => return status,
    };
    // One worker: a notification front-end waits on the bus and nothing
    // else.
    elicit_link::startup::block_on("elicit-notify", 1, run(args, stop_signal()))
}

/// SIGTERM or SIGINT: close the notifications and unregister before
/// leaving, so that the forms move on at once.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
    else {
        // Without signal handlers the default action ends the process.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
