//! Calls about one session go out to a front-end in the order the core
//! raised them: the `Withdraw` of one form reaches it before the `Show`
//! of the session's next, or it would hold two forms of one session for
//! a moment. Each such call waits for the one before it about the same
//! session to the same front-end. Calls about different sessions run at
//! once: one front-end serving 64 sessions would otherwise see their
//! `Show`s one round trip apart.

use std::collections::HashMap;

use tokio::sync::oneshot;
use tokio::sync::oneshot::error::TryRecvError;

/// The map is pruned of lines with no call in flight (a front-end that
/// left, a session that ended) once it holds this many, or twice as many
/// as the last pruning left, so that pruning costs O(1) a call.
const PRUNE_AT: usize = 64;

/// A line of calls: a front-end's bus name and a session.
type Line = (String, String);

/// The last call out on each line.
#[derive(Debug)]
pub(super) struct CallOrder {
    last: HashMap<Line, oneshot::Receiver<()>>,
    prune_at: usize,
}

impl Default for CallOrder {
    fn default() -> CallOrder {
        CallOrder {
            last: HashMap::new(),
            prune_at: PRUNE_AT,
        }
    }
}

/// A call's place in its line: [`Turn::wait`] for the call before it, and
/// hold the turn until the call is done.
#[derive(Debug)]
pub(super) struct Turn {
    before: Option<oneshot::Receiver<()>>,
    /// Dropped when the call is done, which lets the next one go.
    _done: oneshot::Sender<()>,
}

impl CallOrder {
    /// The turn of the next call to `bus_name` about `session`, after
    /// every call already given a turn on that line.
    pub(super) fn next(&mut self, bus_name: &str, session: &str) -> Turn {
        if self.last.len() >= self.prune_at {
            self.last
                .retain(|_, before| matches!(before.try_recv(), Err(TryRecvError::Empty)));
            self.prune_at = PRUNE_AT.max(self.last.len() * 2);
        }
        let (done, after) = oneshot::channel();
        let before = self.last.insert((bus_name.to_owned(), session.to_owned()), after);
        Turn { before, _done: done }
    }
}

impl Turn {
    /// Waits until the call before this one to the same front-end is done.
    pub(super) async fn wait(&mut self) {
        if let Some(before) = self.before.take() {
            // Done, failed or given up: either way it is over.
            let _over = before.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_waits_for_the_one_before_it_about_the_same_session_to_the_same_frontend_only() {
        let mut order = CallOrder::default();
        let first = order.next(":1.1", "s1");
        let mut second = order.next(":1.1", "s1");
        let mut elsewhere = order.next(":1.2", "s1");
        let mut other_session = order.next(":1.1", "s2");
        elsewhere.wait().await;
        other_session.wait().await;
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(20), second.wait()).await;
        assert!(waiting.is_err(), "the second call went before the first was done");
        drop(first);
        second.wait().await;
    }

    #[test]
    fn frontends_with_nothing_in_flight_are_forgotten() {
        let mut order = CallOrder::default();
        let kept = order.next(":1.0", "s");
        for n in 1..=PRUNE_AT {
            drop(order.next(&format!(":1.{n}"), "s"));
        }
        // The last insert pruned the 63 finished ones before it.
        let mut left: Vec<&str> = order.last.keys().map(|(name, _)| name.as_str()).collect();
        left.sort();
        assert_eq!(
            left,
            [":1.0", &format!(":1.{PRUNE_AT}")],
            "only :1.0 is in flight"
        );
        drop(kept);
    }

    #[test]
    fn many_calls_in_flight_do_not_make_every_call_prune() {
        let mut order = CallOrder::default();
        let in_flight: Vec<Turn> = (0..1000).map(|n| order.next(":1.1", &format!("s{n}"))).collect();
        // Pruned at 64, 128, 256, 512: each time all were in flight.
        assert_eq!(
            order.prune_at, 1024,
            "the threshold doubles past what is in flight"
        );
        drop(in_flight);
        drop(order.next(":1.1", "last"));
        assert_eq!(order.last.len(), 1001, "nothing pruned below the threshold");
    }
}
