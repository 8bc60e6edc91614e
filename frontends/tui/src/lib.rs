//! The terminal front-end of elicitd, as a library so that its state and
//! drawing can be tested without a terminal.

pub mod app;
pub mod bus;
pub mod entry;
mod opener;
pub mod plain;
pub mod program;
mod terminal;
pub mod ui;

use std::path::PathBuf;

use elicit_link::{BusArgs, DocsArgs};

pub use bus::{BusEvent, ShowRequest};

/// Command-line arguments.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "elicit-tui",
    version,
    about = "Answer MCP elicitations from elicitd in a terminal"
)]
pub struct Args {
    /// `--bus`.
    #[command(flatten)]
    pub link: BusArgs,
    /// Ask line by line on standard input and output, without a full-screen
    /// interface: for screen readers and dumb terminals.
    #[arg(long)]
    pub plain: bool,
    /// The program that opens a URL the user agreed to open.
    #[arg(
        long,
        value_name = "PROGRAM",
        env = "ELICIT_OPENER",
        default_value = "xdg-open"
    )]
    pub opener: PathBuf,
    /// `--generate-docs`, for packaging.
    #[command(flatten)]
    pub docs: DocsArgs,
}

/// Errors that end the program.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The bus could not be reached or served.
    #[error(transparent)]
    Bus(#[from] elicit_link::LinkError),
    /// The terminal could not be set up or drawn on.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Runs the front-end until the user quits.
pub async fn run(args: Args) -> Result<(), RunError> {
    let (events, inbox) = tokio::sync::mpsc::unbounded_channel();
    let link = bus::start(args.link.bus.as_deref(), events).await?;
    let result = if args.plain {
        plain::run(link.clone(), inbox, &args.opener).await
    } else {
        terminal::run(link.clone(), inbox, &args.opener).await
    };
    link.unregister().await;
    result.map_err(RunError::Terminal)
}
