//! `elicit-gtk`: the GTK 4 front-end of elicitd.
//!
//! It registers with the broker as the front-end `gtk` and shows the forms
//! the broker presents to it in one native window, one form at a time (see
//! the library's documentation for why), and sends the user's answers back.

use std::ops::ControlFlow;
use std::process::ExitCode;
use std::time::Duration;

use elicit_gtk::{Args, app, appearance, bus};

fn main() -> ExitCode {
    // First, before any thread (gtk::init sets the locale again, to the
    // same, and mirrors the layout for a right-to-left language).
    elicit_i18n::init();
    let args = match elicit_link::parse::<Args>(|args| &args.docs) {
        ControlFlow::Continue(args) => args,
        ControlFlow::Break(status) => return status,
    };
    if let Err(error) = gtk::init() {
        eprintln!("elicit-gtk: cannot open the display: {error}");
        return ExitCode::FAILURE;
    }
    let Some(runtime) = elicit_link::startup::runtime("elicit-gtk", 2) else {
        return ExitCode::FAILURE;
    };
    let (events_tx, events) = async_channel::unbounded();
    let (commands, commands_rx) = async_channel::unbounded();
    // Ends with the runtime; nothing to wait for.
    runtime.spawn(appearance::follow(events_tx.clone()));
    let served = runtime.spawn(bus::serve(args.link.bus, args.opener, events_tx, commands_rx));
    let ok = app::run(events, commands.clone());
    // Closing the channel ends the bus side, which unregisters first.
    commands.close();
    let _ = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(2), served).await });
    runtime.shutdown_timeout(Duration::from_millis(500));
    if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
