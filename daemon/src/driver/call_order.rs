//! Calls to one front-end go out in the order the core raised them: the
//! `Withdraw` of one form reaches it before the `Show` of the next, or it
//! would hold two forms of one session for a moment. Each call waits for
//! the one before it to the same front-end; calls to different front-ends
//! run at once.

use std::collections::HashMap;

use tokio::sync::oneshot;
use tokio::sync::oneshot::error::TryRecvError;

/// Past this many front-ends in the map, those with no call in flight are
/// dropped from it (a front-end that left is never called again).
const PRUNE_AT: usize = 64;

/// The last call out to each front-end, by bus name.
#[derive(Debug, Default)]
pub(super) struct CallOrder {
    last: HashMap<String, oneshot::Receiver<()>>,
}

/// A call's place in its front-end's line: [`Turn::wait`] for the call
/// before it, and hold the turn until the call is done.
#[derive(Debug)]
pub(super) struct Turn {
    before: Option<oneshot::Receiver<()>>,
    /// Dropped when the call is done, which lets the next one go.
    _done: oneshot::Sender<()>,
}

impl CallOrder {
    /// The turn of the next call to `bus_name`, after every call already
    /// given a turn there.
    pub(super) fn next(&mut self, bus_name: &str) -> Turn {
        if self.last.len() >= PRUNE_AT {
            self.last
                .retain(|_, before| matches!(before.try_recv(), Err(TryRecvError::Empty)));
        }
        let (done, after) = oneshot::channel();
        let before = self.last.insert(bus_name.to_owned(), after);
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
    async fn a_call_waits_for_the_one_before_it_to_the_same_frontend_only() {
        let mut order = CallOrder::default();
        let first = order.next(":1.1");
        let mut second = order.next(":1.1");
        let mut elsewhere = order.next(":1.2");
        elsewhere.wait().await;
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(20), second.wait()).await;
        assert!(waiting.is_err(), "the second call went before the first was done");
        drop(first);
        second.wait().await;
    }

    #[test]
    fn frontends_with_nothing_in_flight_are_forgotten() {
        let mut order = CallOrder::default();
        let kept = order.next(":1.0");
        for n in 1..=PRUNE_AT {
            drop(order.next(&format!(":1.{n}")));
        }
        // The last insert pruned the 63 finished ones before it.
        let mut left: Vec<&String> = order.last.keys().collect();
        left.sort();
        assert_eq!(
            left,
            [":1.0", &format!(":1.{PRUNE_AT}")],
            "only :1.0 is in flight"
        );
        drop(kept);
    }
}
