//! `elicit-gtk`: the GTK 4 front-end of elicitd, as a library so that its
//! state can be tested without a display.
//!
//! # One window, one form at a time
//!
//! Forms from several agents can be presented at once (the broker presents
//! one per asking session). elicit-gtk shows them in **one window that
//! holds one form at a time**, in the order they arrived, with "N more
//! waiting" in its header, rather than one window per form. Reasons:
//!
//! - A desktop user is interrupted once, not once per form: a burst of
//!   questions from three agents does not throw three windows on the
//!   screen, each taking the keyboard focus from the last.
//! - The focus stays put while the user types: a form that arrives while
//!   another is being answered only changes the count, it never replaces
//!   the form under the user's cursor (and Enter, which accepts, cannot
//!   land on a form the user has not read).
//! - There is always exactly one place to look. A window per form hides
//!   forms behind others, and closing the wrong one answers the wrong agent.
//!
//! When the shown form is answered, the next one takes its place; when
//! none is left the window hides. When the broker withdraws the shown form
//! (answered elsewhere, timed out, the agent went away…), the window says
//! so in a banner, over the next form or alone, and a notice with nothing
//! behind it hides by itself after a few seconds.
//!
//! # Threads
//!
//! GTK runs on the main thread with the GLib main loop; the D-Bus side
//! (zbus) runs on a tokio runtime on other threads. The two meet in two
//! `async-channel`s: [`bus::BusEvent`]s go to the window (read by a future
//! spawned on the GLib main context), [`bus::Command`]s go to the bus.

mod actions;
pub mod app;
pub mod appearance;
pub mod bus;
pub mod fields;
mod geometry;
pub mod mnemonics;
pub mod opener;
pub mod queue;
pub mod reasons;
pub mod tray;
pub mod url;
mod window;
mod wiring;

use std::path::PathBuf;

use elicit_link::{BusArgs, DocsArgs};

/// Command-line arguments.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "elicit-gtk",
    version,
    about = "Answer MCP elicitations from elicitd in a desktop window (GTK 4)"
)]
pub struct Args {
    /// `--bus`.
    #[command(flatten)]
    pub link: BusArgs,
    /// The program that opens a URL the user agreed to open (default: the
    /// desktop's OpenURI portal where there is one, else `xdg-open`).
    #[arg(long, value_name = "PROGRAM", env = "ELICIT_OPENER")]
    pub opener: Option<PathBuf>,
    /// `--generate-docs`, for packaging.
    #[command(flatten)]
    pub docs: DocsArgs,
}
