//! One timer for every deadline, and the tasks the broker owns.
//!
//! A sleeping task per form would outlive its form (nothing cancelled it
//! when the form was answered) and a thousand queued forms meant a
//! thousand timers. Instead the deadlines sit in one ordered set, an entry
//! leaves it when its form finishes, and one task sleeps until the
//! earliest.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use elicit_proto::{Answer, ElicitationAction};
use tokio::task::JoinSet;

use super::Broker;
use crate::store::{FormState, now_ms};

/// How long an expiry that could not be stored waits before it is tried
/// again (the store may be full, or another outcome was being written).
const RETRY: Duration = Duration::from_secs(1);

/// The deadlines of live forms, earliest first.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    entries: Mutex<Entries>,
    changed: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Entries {
    by_time: BTreeSet<(u64, u64)>,
    by_form: HashMap<u64, u64>,
}

impl Deadlines {
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets (or moves) form `id`'s deadline to `at_ms`.
    pub(crate) fn arm(&self, id: u64, at_ms: u64) {
        let earliest = {
            let mut entries = self.entries();
            if let Some(old) = entries.by_form.insert(id, at_ms) {
                entries.by_time.remove(&(old, id));
            }
            entries.by_time.insert((at_ms, id));
            entries.by_time.first() == Some(&(at_ms, id))
        };
        // Only a new earliest deadline changes how long the timer sleeps.
        if earliest {
            self.changed.notify_one();
        }
    }

    /// Drops form `id`'s deadline, if it has one.
    pub(crate) fn disarm(&self, id: u64) {
        let mut entries = self.entries();
        if let Some(at) = entries.by_form.remove(&id) {
            entries.by_time.remove(&(at, id));
        }
    }

    /// How many deadlines are armed.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries().by_form.len()
    }

    /// The earliest deadline, if any.
    fn earliest(&self) -> Option<u64> {
        self.entries().by_time.first().map(|(at, _)| *at)
    }

    /// Takes out every deadline due at `now_ms`.
    fn take_due(&self, now_ms: u64) -> Vec<u64> {
        let mut entries = self.entries();
        let mut due = Vec::new();
        while let Some(&(at, id)) = entries.by_time.first() {
            if at > now_ms {
                break;
            }
            entries.by_time.pop_first();
            entries.by_form.remove(&id);
            due.push(id);
        }
        due
    }
}

/// The timer: sleeps until the earliest deadline, expires what is due.
/// It holds the broker weakly, since the broker owns it.
pub(crate) async fn run_timer(broker: Weak<Broker>, deadlines: Arc<Deadlines>) {
    loop {
        let notified = deadlines.changed.notified();
        match deadlines.earliest() {
            None => notified.await,
            Some(at) => {
                let wait = Duration::from_millis(at.saturating_sub(now_ms()));
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = notified => continue,
                }
            }
        }
        let due = deadlines.take_due(now_ms());
        if due.is_empty() {
            continue;
        }
        let Some(broker) = broker.upgrade() else { return };
        // Each on a task of its own, so that expiries due together share
        // one flush (the group commit) instead of waiting in line.
        for id in due {
            let expiring = broker.clone();
            broker.spawn(async move { expiring.expire(id).await });
        }
    }
}

/// The tasks the broker spawns: owned, so that a stop ends them all.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    set: Mutex<JoinSet<()>>,
}

impl Tasks {
    /// Runs `task` on the runtime, owned by this set.
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        // Finished tasks stay in a JoinSet until joined: reap them here so
        // that a long-running daemon holds only the live ones.
        while set.try_join_next().is_some() {}
        set.spawn(task);
    }

    /// Ends every task and waits until they are gone.
    pub(crate) async fn stop(&self) {
        let mut set = std::mem::take(&mut *self.set.lock().unwrap_or_else(|p| p.into_inner()));
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
}

impl Broker {
    /// Cancels form `id` with reason `timeout`; one that could not be
    /// expired now (a failed write, another outcome being written) gets
    /// its deadline again a little later.
    async fn expire(self: &Arc<Self>, id: u64) {
        let answer = Answer::bare(ElicitationAction::Cancel);
        match self.finish(id, answer, "timeout", "timeout", None).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(error) => tracing::error!(form = id, %error, "could not expire a form; trying again"),
        }
        let pending = self
            .lock()
            .form(&id)
            .is_some_and(|f| f.record.state != FormState::Answered);
        if pending {
            self.deadlines
                .arm(id, now_ms().saturating_add(RETRY.as_millis() as u64));
        }
    }

    /// Cancels form `id` with reason `timeout` at `deadline_ms`.
    pub(crate) fn arm_deadline(&self, id: u64, deadline_ms: u64) {
        self.deadlines.arm(id, deadline_ms);
    }

    /// Form `id` finished: its deadline goes.
    pub(crate) fn forget_deadline(&self, id: u64) {
        self.deadlines.disarm(id);
    }

    /// Runs `task` owned by the broker: [`Broker::stop`] ends it.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.spawn(task);
    }

    /// Ends every task the broker runs (the timer, calls out to
    /// front-ends, grace periods, signals), for an orderly stop.
    pub async fn stop(&self) {
        self.tasks.stop().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_come_out_in_time_order_and_a_disarmed_one_never() {
        let deadlines = Deadlines::default();
        deadlines.arm(1, 300);
        deadlines.arm(2, 100);
        deadlines.arm(3, 200);
        deadlines.disarm(3);
        assert_eq!(deadlines.earliest(), Some(100));
        assert_eq!(deadlines.take_due(250), [2]);
        assert_eq!(deadlines.take_due(1000), [1]);
        assert_eq!(deadlines.len(), 0);
    }

    #[test]
    fn arming_again_moves_a_deadline() {
        let deadlines = Deadlines::default();
        deadlines.arm(1, 100);
        deadlines.arm(1, 500);
        assert_eq!(deadlines.take_due(200), Vec::<u64>::new());
        assert_eq!(deadlines.take_due(500), [1]);
    }

    #[tokio::test]
    async fn stopping_ends_every_task() {
        let tasks = Tasks::default();
        let (sender, receiver) = tokio::sync::oneshot::channel::<()>();
        tasks.spawn(async move {
            let _sender = sender;
            std::future::pending::<()>().await;
        });
        tasks.stop().await;
        assert!(receiver.await.is_err(), "the task still holds its end");
    }
}
