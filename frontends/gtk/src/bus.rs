//! The D-Bus side, on the tokio runtime: the link's calls and news become
//! [`BusEvent`]s for the window, the window's [`Command`]s become answers,
//! and URLs the user agreed to open are opened.

use std::path::PathBuf;

use async_channel::{Receiver, Sender};
use elicit_link::{Link, LinkEvent, Profile};
use elicit_proto::{Answer, ElicitationAction, Error};

pub use elicit_link::{Command, ShowRequest};

use crate::opener;

/// How this front-end registers: above elicit-tui (10) and elicit-notify
/// (5), with the backlog for the "N more waiting" count.
pub const PROFILE: Profile = Profile::new("gtk", 20).with_backlog();

/// The name this front-end registers with.
pub const FRONTEND_NAME: &str = PROFILE.name;
// The queue time and deadline of a `ShowRequest` are not shown: a desktop
// window counting down is anything but calm.

/// What the bus tells the window.
#[derive(Debug)]
pub enum BusEvent {
    /// What the link says: forms to show and withdraw, the broker's news.
    Link(LinkEvent),
    /// The broker's reply to an answer (or the opener's failure).
    Answered {
        /// The form id.
        form: String,
        /// What was sent.
        action: ElicitationAction,
        /// Whether the broker took it.
        result: Result<(), AnswerError>,
    },
    /// The desktop prefers a dark (`true`) or light style (the settings
    /// portal, see `appearance`).
    PreferDark(bool),
    /// The user chose this form in the tray: show it first, and the
    /// window.
    Open(String),
    /// Another elicit-gtk serves this bus: this one ends, successfully.
    AlreadyRunning,
    /// The bus cannot be used at all: the program must end.
    Fatal(String),
}

/// The name the running elicit-gtk owns on the broker's bus, so that a
/// second copy (an autostart beside a daemon-started one) ends at once.
pub const INSTANCE_NAME: &str = "dev.elicitd.Gtk";

/// Owns [`INSTANCE_NAME`] on a connection of its own (the link's
/// connection registers at once, and a second copy must not be presented
/// a form before it ends); `None` when another copy owns it.
async fn one_copy(address: Option<&str>) -> zbus::Result<Option<zbus::Connection>> {
    let conn = match address {
        Some(address) => zbus::connection::Builder::address(address)?.build().await?,
        None => zbus::Connection::session().await?,
    };
    // Its object server answers a call to this connection (with "no such
    // object") rather than leaving the caller waiting.
    let _ = conn.object_server();
    match conn
        .request_name_with_flags(INSTANCE_NAME, zbus::fdo::RequestNameFlags::DoNotQueue.into())
        .await
    {
        Ok(_) => Ok(Some(conn)),
        Err(zbus::Error::NameTaken) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Why an answer did not reach the broker.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The broker refused or could not be reached.
    #[error(transparent)]
    Broker(#[from] Error),
    /// The URL could not be opened, so nothing was sent.
    #[error("could not open the address: {0}")]
    Open(#[from] opener::OpenError),
}

/// Connects to `address` (or the session bus), serves `Frontend1` and
/// keeps it registered with the broker, across broker restarts.
async fn start(address: Option<&str>, events: &Sender<BusEvent>) -> Result<Link, elicit_link::LinkError> {
    // The channel is unbounded: a send fails only once the window is gone.
    let events = events.clone();
    Link::forwarding(address, PROFILE, move |event| {
        events.try_send(BusEvent::Link(event)).is_ok()
    })
    .await
}

/// Runs the bus side until the window drops its command sender: serves
/// `Frontend1`, carries out `commands` and reports to `events`. Opening a
/// URL uses `opener` when given, else the portal or `xdg-open`.
pub async fn serve(
    address: Option<String>,
    opener: Option<PathBuf>,
    events: Sender<BusEvent>,
    commands: Receiver<Command>,
) {
    // Held until the program ends.
    let _instance = match one_copy(address.as_deref()).await {
        Ok(Some(conn)) => conn,
        Ok(None) => {
            let _ = events.send(BusEvent::AlreadyRunning).await;
            return;
        }
        Err(error) => {
            let error = elicit_link::LinkError::from(error);
            let _ = events.send(BusEvent::Fatal(error.to_string())).await;
            return;
        }
    };
    let link = match start(address.as_deref(), &events).await {
        Ok(link) => link,
        Err(error) => {
            let _ = events.send(BusEvent::Fatal(error.to_string())).await;
            return;
        }
    };
    // Ends by itself once the window is gone.
    tokio::spawn(crate::tray::run(link.connection().clone(), events.clone()));
    while let Ok(command) = commands.recv().await {
        if matches!(command, Command::Quit) {
            break;
        }
        let link = link.clone();
        let events = events.clone();
        let opener = opener.clone();
        tokio::spawn(async move {
            let (form, action, result) = match command {
                Command::Answer { form, token, answer } => {
                    let result = link
                        .answer(&form, &token, &answer)
                        .await
                        .map_err(AnswerError::from);
                    (form, answer.action, result)
                }
                Command::OpenUrl { form, token, url } => {
                    let result = match opener::open(opener.as_deref(), &url).await {
                        Ok(()) => {
                            let accept = Answer::bare(ElicitationAction::Accept);
                            link.answer(&form, &token, &accept)
                                .await
                                .map_err(AnswerError::from)
                        }
                        Err(error) => Err(AnswerError::from(error)),
                    };
                    (form, ElicitationAction::Accept, result)
                }
                // Ended the loop above.
                Command::Quit => return,
            };
            let _ = events.send(BusEvent::Answered { form, action, result }).await;
        });
    }
    // The window is closing: its forms go on to another front-end at once
    // rather than when the connection drops.
    link.unregister().await;
}
