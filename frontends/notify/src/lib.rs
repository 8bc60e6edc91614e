//! The desktop-notification front-end of elicitd, as a library so that
//! what a form becomes in a notification can be tested without a desktop.
//!
//! It registers with the broker as the front-end `notify`. A confirmation,
//! or one single-choice field of at most three options, is answered from
//! the notification's actions; anything richer offers "Open…", which hands
//! the form to the next front-end (`Broker1.PassOn`), and "Decline".

pub mod app;
pub mod broker;
pub mod card;
pub mod escalate;
pub mod program;
pub mod quiet;
pub mod server;

use elicit_link::DocsArgs;

/// Command-line arguments.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "elicit-notify",
    version,
    about = "Answer MCP elicitations from elicitd in desktop notifications"
)]
pub struct Args {
    // Not elicit-link's `BusArgs`: the notifications go over this bus too,
    // and the help says so.
    /// The D-Bus address of the bus elicitd and the notification server are
    /// on (default: the session bus, `DBUS_SESSION_BUS_ADDRESS`).
    #[arg(long, value_name = "ADDRESS")]
    pub bus: Option<String>,
    /// Notify again about a form still waiting this many seconds after its
    /// last notification; 0 never does. A form whose deadline is less than
    /// a minute away is notified with urgency critical either way.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 120,
        env = "ELICIT_NOTIFY_RENOTIFY_AFTER"
    )]
    pub renotify_after: u64,
    /// `--generate-docs`, for packaging.
    #[command(flatten)]
    pub docs: DocsArgs,
}

/// Errors that end the program.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The bus could not be reached.
    #[error("D-Bus: {0}")]
    Bus(#[from] zbus::Error),
    /// `Frontend1` could not be served.
    #[error(transparent)]
    Link(#[from] elicit_link::LinkError),
}

/// Runs the front-end until `stop` resolves or the bus goes away.
pub async fn run(args: Args, stop: impl std::future::Future<Output = ()>) -> Result<(), RunError> {
    let (events, inbox) = tokio::sync::mpsc::unbounded_channel();
    let link = broker::connect(args.bus.as_deref(), events).await?;
    // Forms shown meanwhile wait in `inbox`: the notification server's
    // signals are subscribed to before the first notification goes out.
    let server = server::Server::connect(link.connection()).await?;
    let schedule = escalate::Schedule {
        renotify_after: (args.renotify_after != 0)
            .then(|| std::time::Duration::from_secs(args.renotify_after)),
        ..escalate::Schedule::default()
    };
    app::App::new(link, server, schedule).run(inbox, stop).await;
    Ok(())
}
