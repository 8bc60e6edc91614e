//! The broker as the notifications see it: the link's calls and news
//! become [`BrokerEvent`]s on the loop's channel.

use elicit_link::{Frontend, LinkError, Observer, OwnerChange, Profile, ShuttingDown};
use tokio::sync::mpsc::UnboundedSender;

pub use elicit_link::{Link, ShowRequest};

/// How this front-end registers: every form (what a notification cannot
/// hold, it hands on with "Open…"), below elicit-tui (10), since without a
/// preference list a terminal that is open is the better place to answer.
/// No backlog: a notification has nowhere to show it.
pub const PROFILE: Profile = Profile::new("notify", 5);

/// What the broker tells the front-end.
#[derive(Debug, Clone)]
pub enum BrokerEvent {
    /// Show a form.
    Show(Box<ShowRequest>),
    /// Stop showing a form.
    Withdraw(String),
    /// The broker left the bus (or was replaced): forms shown are stale.
    /// Always sent before registering with a new broker, whose `Show`
    /// calls then follow.
    Gone,
}

/// The link's side of the loop's channel.
struct Forward(UnboundedSender<BrokerEvent>);

impl Frontend for Forward {
    fn show(&self, request: ShowRequest) -> Result<(), ShuttingDown> {
        self.0
            .send(BrokerEvent::Show(Box::new(request)))
            .map_err(|_| ShuttingDown)
    }

    fn withdraw(&self, form: String, _reason: String) {
        // A closed channel means the front-end is going; nothing is left
        // to close.
        let _ = self.0.send(BrokerEvent::Withdraw(form));
    }
}

impl Observer for Forward {
    fn not_registered(&self, why: &str) {
        // No broker yet is no error: the link registers once it comes.
        eprintln!("elicit-notify: cannot register with elicitd (waiting for it): {why}");
    }

    fn broker_left(&self, _change: OwnerChange) {
        let _ = self.0.send(BrokerEvent::Gone);
    }
}

/// Connects to `address` (or the session bus), serves `Frontend1` and
/// keeps it registered with the broker, across broker restarts, for as
/// long as the link's connection lives.
pub async fn connect(address: Option<&str>, events: UnboundedSender<BrokerEvent>) -> Result<Link, LinkError> {
    let forward = || Forward(events.clone());
    Link::connect(address, PROFILE, forward(), forward()).await
}
