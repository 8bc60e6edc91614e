//! The bus as the terminal sees it: the link's calls and news become
//! [`BusEvent`]s on the interface's channel.

use elicit_link::{LinkError, LinkEvent, Profile};
use tokio::sync::mpsc::UnboundedSender;

pub use elicit_link::{Link, ShowRequest};

/// How this front-end registers: above elicit-notify (5), below elicit-gtk
/// (20), with the backlog for its per-session counts.
pub const PROFILE: Profile = Profile::new("tui", 10).with_backlog();

/// What the bus tells the user interface.
pub type BusEvent = LinkEvent;

/// Connects to `address` (or the session bus), serves `Frontend1` and
/// keeps it registered with the broker, across broker restarts, for as
/// long as the returned link lives.
pub async fn start(address: Option<&str>, events: UnboundedSender<BusEvent>) -> Result<Link, LinkError> {
    Link::forwarding(address, PROFILE, move |event| events.send(event).is_ok()).await
}
