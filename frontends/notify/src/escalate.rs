//! When a waiting form is notified again, and how urgently: a pure state
//! machine over an explicit clock (milliseconds since the epoch, the unit
//! of the broker's `deadline-ms`), so that it is tested without waiting.
//!
//! The rules:
//! * a form still waiting [`Schedule::renotify_after`] after its last
//!   notification is notified again, with urgency normal;
//! * once its deadline is less than [`Schedule::critical_before`] away, it
//!   is notified once more with urgency critical, and then left alone: the
//!   critical notification stays until the form is answered or times out;
//! * under Do Not Disturb a normal notification is not sent (the form is
//!   held quietly, the tray still counts it): the critical one is, since a
//!   form about to time out fails the agent that asked.

use std::time::Duration;

/// How loud a notification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    /// The first notification and the reminders.
    Normal,
    /// The deadline is near.
    Critical,
}

/// The escalation settings, shared by every form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// How long a form waits after a notification before the next one;
    /// `None` never reminds.
    pub renotify_after: Option<Duration>,
    /// How close the deadline is when the critical notification goes out.
    pub critical_before: Duration,
}

impl Schedule {
    /// The default reminder interval: two minutes.
    pub const RENOTIFY_AFTER: Duration = Duration::from_secs(120);
    /// How close a deadline must be for urgency critical: one minute.
    pub const CRITICAL_BEFORE: Duration = Duration::from_secs(60);
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            renotify_after: Some(Schedule::RENOTIFY_AFTER),
            critical_before: Schedule::CRITICAL_BEFORE,
        }
    }
}

/// One form's place in the schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// When it will be cancelled (ms since the epoch); `None` for never.
    deadline_ms: Option<u64>,
    /// When the schedule last acted on it: a notification sent, or one
    /// held back by Do Not Disturb.
    last_ms: u64,
    /// The critical notification went out.
    critical: bool,
}

impl Escalation {
    /// A form shown at `now_ms` whose deadline is `deadline_ms` (the
    /// broker's `deadline-ms`, 0 for none), and the urgency of its first
    /// notification: `None` when Do Not Disturb (`quiet`) holds it back.
    pub fn start(
        schedule: &Schedule,
        now_ms: u64,
        deadline_ms: u64,
        quiet: bool,
    ) -> (Escalation, Option<Urgency>) {
        let mut escalation = Escalation {
            deadline_ms: (deadline_ms != 0).then_some(deadline_ms),
            last_ms: now_ms,
            critical: false,
        };
        escalation.forget_past_deadline(now_ms);
        let urgency = if escalation.critical_due(schedule, now_ms) {
            escalation.critical = true;
            Some(Urgency::Critical)
        } else if quiet {
            None
        } else {
            Some(Urgency::Normal)
        };
        (escalation, urgency)
    }

    /// When [`Escalation::step`] next has something to do; `None` when
    /// nothing is left (the critical notification went out, or nothing
    /// reminds and there is no deadline).
    pub fn next_ms(&self, schedule: &Schedule) -> Option<u64> {
        if self.critical {
            return None;
        }
        let critical = self.critical_at(schedule);
        let renotify = schedule
            .renotify_after
            .map(|after| self.last_ms.saturating_add(millis(after)));
        match (critical, renotify) {
            (Some(c), Some(r)) => Some(c.min(r)),
            (c, r) => c.or(r),
        }
    }

    /// What is due at `now_ms`: a notification of this urgency, or
    /// nothing (not yet, or held back by `quiet`).
    pub fn step(&mut self, schedule: &Schedule, now_ms: u64, quiet: bool) -> Option<Urgency> {
        if self.critical {
            return None;
        }
        self.forget_past_deadline(now_ms);
        if self.critical_due(schedule, now_ms) {
            self.critical = true;
            self.last_ms = now_ms;
            return Some(Urgency::Critical);
        }
        let after = schedule.renotify_after?;
        if now_ms < self.last_ms.saturating_add(millis(after)) {
            return None;
        }
        self.last_ms = now_ms;
        (!quiet).then_some(Urgency::Normal)
    }

    /// A deadline that has passed is the broker's to act on (it times the
    /// form out): no critical notification for it, and no wake-up.
    fn forget_past_deadline(&mut self, now_ms: u64) {
        if self.deadline_ms.is_some_and(|deadline| deadline <= now_ms) {
            self.deadline_ms = None;
        }
    }

    /// When the critical notification is due, if there is a deadline.
    fn critical_at(&self, schedule: &Schedule) -> Option<u64> {
        self.deadline_ms
            .map(|deadline| deadline.saturating_sub(millis(schedule.critical_before)))
    }

    /// The critical notification is due and still useful: the deadline is
    /// near, not past (the broker times the form out then).
    fn critical_due(&self, schedule: &Schedule, now_ms: u64) -> bool {
        match (self.critical_at(schedule), self.deadline_ms) {
            (Some(at), Some(deadline)) => !self.critical && at <= now_ms && now_ms < deadline,
            _ => false,
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000;
    const MIN: u64 = 60 * S;
    const T0: u64 = 1_700_000_000_000;

    /// Runs the schedule from `start` by its own `next_ms` until `until`,
    /// returning (ms after T0, urgency) of every notification sent.
    fn run(
        escalation: &mut Escalation,
        schedule: &Schedule,
        until: u64,
        quiet: impl Fn(u64) -> bool,
    ) -> Vec<(u64, Urgency)> {
        let mut sent = Vec::new();
        while let Some(at) = escalation.next_ms(schedule) {
            if at > until {
                break;
            }
            if let Some(urgency) = escalation.step(schedule, at, quiet(at)) {
                sent.push((at - T0, urgency));
            }
        }
        sent
    }

    #[test]
    fn a_waiting_form_is_reminded_every_interval() {
        let schedule = Schedule::default();
        let (mut e, first) = Escalation::start(&schedule, T0, 0, false);
        assert_eq!(first, Some(Urgency::Normal));
        // Nothing before the interval is up.
        assert_eq!(e.step(&schedule, T0 + 2 * MIN - 1, false), None);
        let sent = run(&mut e, &schedule, T0 + 7 * MIN, |_| false);
        assert_eq!(
            sent,
            [
                (2 * MIN, Urgency::Normal),
                (4 * MIN, Urgency::Normal),
                (6 * MIN, Urgency::Normal)
            ]
        );
    }

    #[test]
    fn a_deadline_under_a_minute_away_is_critical_once() {
        let schedule = Schedule::default();
        // A 90 s timeout: the first notification, then critical at 30 s,
        // before any reminder, and nothing after it.
        let (mut e, first) = Escalation::start(&schedule, T0, T0 + 90 * S, false);
        assert_eq!(first, Some(Urgency::Normal));
        assert_eq!(e.next_ms(&schedule), Some(T0 + 30 * S));
        let sent = run(&mut e, &schedule, T0 + 10 * MIN, |_| false);
        assert_eq!(sent, [(30 * S, Urgency::Critical)]);
        assert_eq!(e.next_ms(&schedule), None);
    }

    #[test]
    fn reminders_come_before_the_critical_one() {
        let schedule = Schedule::default();
        let (mut e, _) = Escalation::start(&schedule, T0, T0 + 5 * MIN, false);
        let sent = run(&mut e, &schedule, T0 + 10 * MIN, |_| false);
        assert_eq!(sent, [(2 * MIN, Urgency::Normal), (4 * MIN, Urgency::Critical)]);
    }

    #[test]
    fn a_form_shown_near_its_deadline_is_critical_at_once() {
        let schedule = Schedule::default();
        let (mut e, first) = Escalation::start(&schedule, T0, T0 + 30 * S, true);
        assert_eq!(first, Some(Urgency::Critical), "even under Do Not Disturb");
        assert_eq!(e.next_ms(&schedule), None);
        assert_eq!(e.step(&schedule, T0 + 29 * S, false), None);
    }

    #[test]
    fn do_not_disturb_holds_back_all_but_the_critical_one() {
        let schedule = Schedule::default();
        let (mut e, first) = Escalation::start(&schedule, T0, T0 + 10 * MIN, true);
        assert_eq!(first, None);
        // Quiet for the first five minutes, then not.
        let sent = run(&mut e, &schedule, T0 + 20 * MIN, |at| at < T0 + 5 * MIN);
        assert_eq!(
            sent,
            [
                (6 * MIN, Urgency::Normal),
                (8 * MIN, Urgency::Normal),
                (9 * MIN, Urgency::Critical)
            ]
        );
        let (mut e, _) = Escalation::start(&schedule, T0, T0 + 10 * MIN, true);
        let sent = run(&mut e, &schedule, T0 + 20 * MIN, |_| true);
        assert_eq!(sent, [(9 * MIN, Urgency::Critical)]);
    }

    #[test]
    fn without_reminders_only_the_deadline_counts() {
        let schedule = Schedule {
            renotify_after: None,
            ..Schedule::default()
        };
        let (mut e, _) = Escalation::start(&schedule, T0, 0, false);
        assert_eq!(e.next_ms(&schedule), None);
        assert_eq!(e.step(&schedule, T0 + 60 * MIN, false), None);
        let (mut e, _) = Escalation::start(&schedule, T0, T0 + 62 * S, false);
        assert_eq!(
            run(&mut e, &schedule, T0 + MIN * 5, |_| false),
            [(2 * S, Urgency::Critical)]
        );
    }

    #[test]
    fn a_deadline_already_past_is_left_to_the_broker() {
        let schedule = Schedule::default();
        let (mut e, first) = Escalation::start(&schedule, T0, T0 - S, false);
        assert_eq!(first, Some(Urgency::Normal));
        assert_eq!(e.step(&schedule, T0 + S, false), None);
        assert_eq!(e.next_ms(&schedule), Some(T0 + 2 * MIN));
        // A deadline passed while nobody looked (a suspended laptop) is
        // no wake-up either.
        let (mut e, _) = Escalation::start(&schedule, T0, T0 + 5 * MIN, false);
        assert_eq!(e.step(&schedule, T0 + 6 * MIN, false), Some(Urgency::Normal));
        assert_eq!(e.next_ms(&schedule), Some(T0 + 8 * MIN));
    }
}
