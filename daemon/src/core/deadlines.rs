//! Time: every form's deadline in one ordered set, the idle exit, and
//! what the timer does when it fires.
//!
//! The core reads no clock: every input comes with `now`, and
//! [`super::Core::next_timeout`] says when the driver's one timer must
//! wake it next.

use std::collections::{BTreeSet, HashMap};

use super::{Core, Effect};

/// The deadlines of live forms, earliest first.
#[derive(Debug, Default)]
pub(super) struct Deadlines {
    by_time: BTreeSet<(u64, u64)>,
    by_form: HashMap<u64, u64>,
}

impl Deadlines {
    /// Sets (or moves) form `id`'s deadline to `at`.
    pub(super) fn arm(&mut self, id: u64, at: u64) {
        if let Some(old) = self.by_form.insert(id, at) {
            self.by_time.remove(&(old, id));
        }
        self.by_time.insert((at, id));
    }

    /// Drops form `id`'s deadline, if it has one.
    pub(super) fn disarm(&mut self, id: u64) {
        if let Some(at) = self.by_form.remove(&id) {
            self.by_time.remove(&(at, id));
        }
    }

    /// The earliest deadline, if any.
    pub(super) fn earliest(&self) -> Option<u64> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// The deadline of form `id`, if it has one.
    #[cfg(test)]
    pub(super) fn of(&self, id: u64) -> Option<u64> {
        self.by_form.get(&id).copied()
    }

    /// Takes out every deadline due at `now`.
    pub(super) fn take_due(&mut self, now: u64) -> Vec<u64> {
        let mut due = Vec::new();
        while let Some(&(at, id)) = self.by_time.first() {
            if at > now {
                break;
            }
            self.by_time.pop_first();
            self.by_form.remove(&id);
            due.push(id);
        }
        due
    }
}

/// Idleness: since when nothing has kept the daemon running, and whether
/// the name is being given up.
///
/// sled's I/O threads wake several times a second whatever the daemon
/// does, so the only idle daemon that wakes nobody is one that has
/// exited; D-Bus activation brings it back on the next call. Front-ends
/// and watchers do not keep it: they register again when the name returns.
#[derive(Debug)]
pub(super) struct Idle {
    /// How long to stay idle before leaving; `None`: never leave.
    period: Option<u64>,
    /// When a session last opened or closed, or such a call came in.
    last_active: u64,
    /// The name is being given up (since `last_active` was this).
    releasing: Option<u64>,
}

impl Idle {
    pub(super) fn new(period: Option<u64>, now: u64) -> Idle {
        Idle {
            period,
            last_active: now,
            releasing: None,
        }
    }

    /// Something happened that restarts the idle clock.
    pub(super) fn touch(&mut self, now: u64) {
        self.last_active = self.last_active.max(now);
    }

    /// When to give the name up, while `idle`.
    pub(super) fn due(&self, idle: bool) -> Option<u64> {
        let period = self.period?;
        (idle && self.releasing.is_none()).then(|| self.last_active.saturating_add(period))
    }
}

impl Core {
    /// The timer fired: what is due at `now` happens.
    pub(super) fn timer(&mut self, now: u64) {
        self.deadlines_due(now);
        self.graces_due(now);
        if self.idle.due(self.is_idle()).is_some_and(|at| at <= now) {
            tracing::info!("idle: giving up the bus name");
            self.idle.releasing = Some(self.idle.last_active);
            self.effects.push(Effect::ReleaseName);
        }
    }

    /// The name was given up: leave, unless something arrived meanwhile.
    pub(super) fn name_released(&mut self, now: u64, busy: bool) {
        let Some(since) = self.idle.releasing.take() else {
            return;
        };
        if !busy && self.is_idle() && self.idle.last_active == since {
            self.effects.push(Effect::Exit);
        } else {
            tracing::info!("a call arrived while leaving idle; serving on");
            self.idle.touch(now);
            self.effects.push(Effect::RequestName);
        }
    }
}
