//! The bus as the terminal sees it: the link's calls and news become
//! [`BusEvent`]s on the interface's channel.

use std::collections::HashMap;

use elicit_link::{Frontend, LinkError, Observer, OwnerChange, Profile, ShuttingDown};
use tokio::sync::mpsc::UnboundedSender;

pub use elicit_link::{Link, ShowRequest};

/// How this front-end registers: above elicit-notify (5), below elicit-gtk
/// (20), with the backlog for its per-session counts.
pub const PROFILE: Profile = Profile::new("tui", 10).with_backlog();

/// What the bus tells the user interface.
#[derive(Debug, Clone)]
pub enum BusEvent {
    /// Show a form.
    Show(Box<ShowRequest>),
    /// Stop showing a form, for `reason`.
    Withdraw {
        /// The form id.
        form: String,
        /// `cancelled`, `client-gone`, `timeout`, `answered`, `claimed`, `closed`…
        reason: String,
    },
    /// Registered with the broker (again, after a restart): forms shown
    /// before are stale.
    Registered,
    /// The broker is not there; forms will come once it is.
    BrokerGone(String),
    /// How many forms wait, queued behind the presented one, per session.
    Backlog(HashMap<String, usize>),
}

/// The link's side of the channel.
struct Forward(UnboundedSender<BusEvent>);

impl Frontend for Forward {
    fn show(&self, request: ShowRequest) -> Result<(), ShuttingDown> {
        self.0
            .send(BusEvent::Show(Box::new(request)))
            .map_err(|_| ShuttingDown)
    }

    fn withdraw(&self, form: String, reason: String) {
        // A closed channel means the UI is gone; nothing is left to withdraw.
        let _ = self.0.send(BusEvent::Withdraw { form, reason });
    }
}

impl Observer for Forward {
    fn registered(&self) {
        let _ = self.0.send(BusEvent::Registered);
    }

    fn not_registered(&self, why: &str) {
        let why = format!("cannot register with elicitd: {why}");
        let _ = self.0.send(BusEvent::BrokerGone(why));
    }

    fn broker_left(&self, change: OwnerChange) {
        // A replacement is registered with at once, and `Registered` or
        // `BrokerGone` follows.
        if change == OwnerChange::Left {
            let _ = self
                .0
                .send(BusEvent::BrokerGone("elicitd stopped; waiting for it".into()));
        }
    }

    fn backlog(&self, counts: HashMap<String, usize>) {
        let _ = self.0.send(BusEvent::Backlog(counts));
    }
}

/// Connects to `address` (or the session bus), serves `Frontend1` and
/// keeps it registered with the broker, across broker restarts, for as
/// long as the returned link lives.
pub async fn start(address: Option<&str>, events: UnboundedSender<BusEvent>) -> Result<Link, LinkError> {
    let conn = elicit_link::startup::connect(address).await?;
    let forward = || Forward(events.clone());
    Link::start(&conn, PROFILE, forward(), forward()).await
}
