//! For a front-end that takes everything on one channel: the link's calls
//! and news as [`LinkEvent`]s, through [`Forward`].

use std::collections::HashMap;

use crate::{Frontend, Link, LinkError, Observer, OwnerChange, Profile, ShowRequest, ShuttingDown};

/// What the link tells the front-end's own loop.
#[derive(Debug, Clone)]
pub enum LinkEvent {
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

/// A [`Frontend`] and [`Observer`] that hands every call and piece of news
/// to `send` as a [`LinkEvent`]; `send` returns false once the receiving
/// loop is gone (a closed channel).
#[derive(Debug, Clone)]
pub struct Forward<F>(pub F);

impl<F> Frontend for Forward<F>
where
    F: Fn(LinkEvent) -> bool + Send + Sync + 'static,
{
    fn show(&self, request: ShowRequest) -> Result<(), ShuttingDown> {
        if (self.0)(LinkEvent::Show(Box::new(request))) {
            Ok(())
        } else {
            Err(ShuttingDown)
        }
    }

    fn withdraw(&self, form: String, reason: String) {
        // A loop that is gone shows nothing any more: nothing to withdraw.
        (self.0)(LinkEvent::Withdraw { form, reason });
    }
}

impl<F> Observer for Forward<F>
where
    F: Fn(LinkEvent) -> bool + Send + Sync + 'static,
{
    fn registered(&self) {
        (self.0)(LinkEvent::Registered);
    }

    fn not_registered(&self, why: &str) {
        (self.0)(LinkEvent::BrokerGone(format!(
            "cannot register with elicitd: {why}"
        )));
    }

    fn broker_left(&self, change: OwnerChange) {
        // A replacement is registered with at once, and `Registered` or
        // `BrokerGone` follows.
        if change == OwnerChange::Left {
            (self.0)(LinkEvent::BrokerGone(
                "elicitd stopped; waiting for it to return".into(),
            ));
        }
    }

    fn backlog(&self, counts: HashMap<String, usize>) {
        (self.0)(LinkEvent::Backlog(counts));
    }
}

impl Link {
    /// Connects to `address` (or the session bus) and starts a link as
    /// `profile` whose calls and news all go to `send` as [`LinkEvent`]s
    /// (see [`Forward`]).
    pub async fn forwarding<F>(address: Option<&str>, profile: Profile, send: F) -> Result<Link, LinkError>
    where
        F: Fn(LinkEvent) -> bool + Clone + Send + Sync + 'static,
    {
        Link::connect(address, profile, Forward(send.clone()), Forward(send)).await
    }
}
