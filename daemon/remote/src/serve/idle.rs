//! When a stateful session is over though its host never said so: hosts
//! such as the TypeScript SDK's `close()` drop their streams and send no
//! DELETE, and a host killed mid-form cannot. The decision is plain code
//! on plain instants, so that it is tested without waiting.
//!
//! A session with a client connection open (a POST's stream or the GET
//! stream) is never idle. Otherwise its clock runs from the later of its
//! last request and its last connection's end: it ends after
//! [`IdleRules::idle`], or after the shorter [`IdleRules::pending`] when
//! something waits for a client to take it (a response, a form, a server
//! request) and no stream is there to carry it.

use std::time::{Duration, Instant};

/// How long a session without a client may stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleRules {
    /// With nothing waiting for the client.
    pub idle: Duration,
    /// With something waiting for a client that no stream reaches.
    pub pending: Duration,
}

impl Default for IdleRules {
    fn default() -> Self {
        IdleRules {
            idle: Duration::from_secs(5 * 60),
            pending: Duration::from_secs(30),
        }
    }
}

/// What the clock needs to know of one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    /// The last request, or the end of the last connection.
    pub last: Instant,
    /// Client connections open now.
    pub connections: usize,
    /// Something waits for a client to take it.
    pub pending: bool,
}

impl Activity {
    /// True while a client holds a connection.
    pub fn connected(&self) -> bool {
        self.connections > 0
    }
}

impl IdleRules {
    /// When the session ends unless something happens; `None` while a
    /// client is connected.
    pub fn deadline(&self, activity: &Activity) -> Option<Instant> {
        if activity.connected() {
            return None;
        }
        let allowed = if activity.pending {
            self.pending.min(self.idle)
        } else {
            self.idle
        };
        Some(activity.last + allowed)
    }

    /// True when the session's time is up at `now`.
    pub fn expired(&self, activity: &Activity, now: Instant) -> bool {
        self.deadline(activity).is_some_and(|deadline| now >= deadline)
    }

    /// How often to look: often enough that a session ends within a
    /// quarter of its shorter period late, never busier than 20 times a
    /// second, and at least every 5 seconds.
    pub fn tick(&self) -> Duration {
        (self.pending.min(self.idle) / 4).clamp(Duration::from_millis(50), Duration::from_secs(5))
    }
}

/// The session to end to make room in a full table: the one without a
/// connection whose last activity is the oldest. `None` when every
/// session has a client connected (they are all in use).
pub fn evictee<K: Clone>(sessions: impl IntoIterator<Item = (K, Activity)>) -> Option<K> {
    sessions
        .into_iter()
        .filter(|(_, activity)| !activity.connected())
        .min_by_key(|(_, activity)| activity.last)
        .map(|(key, _)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: IdleRules = IdleRules {
        idle: Duration::from_secs(300),
        pending: Duration::from_secs(30),
    };

    fn activity(t0: Instant, last: u64, connections: usize, pending: bool) -> Activity {
        Activity {
            last: t0 + Duration::from_secs(last),
            connections,
            pending,
        }
    }

    #[test]
    fn a_connected_session_never_expires() {
        let t0 = Instant::now();
        let a = activity(t0, 0, 1, true);
        assert_eq!(RULES.deadline(&a), None);
        assert!(!RULES.expired(&a, t0 + Duration::from_secs(86_400)));
    }

    #[test]
    fn an_unconnected_session_ends_after_the_idle_period() {
        let t0 = Instant::now();
        let a = activity(t0, 10, 0, false);
        assert!(!RULES.expired(&a, t0 + Duration::from_secs(309)));
        assert!(RULES.expired(&a, t0 + Duration::from_secs(310)));
    }

    #[test]
    fn something_waiting_for_a_missing_client_shortens_it() {
        let t0 = Instant::now();
        let a = activity(t0, 10, 0, true);
        assert!(!RULES.expired(&a, t0 + Duration::from_secs(39)));
        assert!(RULES.expired(&a, t0 + Duration::from_secs(40)));
        // A pending period longer than the idle one does not lengthen it.
        let odd = IdleRules {
            idle: Duration::from_secs(5),
            pending: Duration::from_secs(60),
        };
        assert!(odd.expired(&a, t0 + Duration::from_secs(15)));
    }

    #[test]
    fn the_longest_idle_unconnected_session_is_evicted() {
        let t0 = Instant::now();
        let sessions = [
            ("busy-old", activity(t0, 0, 2, false)),
            ("idle-new", activity(t0, 50, 0, false)),
            ("idle-old", activity(t0, 20, 0, true)),
        ];
        assert_eq!(evictee(sessions), Some("idle-old"));
        assert_eq!(evictee([("busy", activity(t0, 0, 1, false))]), None);
        assert_eq!(evictee(Vec::<(&str, Activity)>::new()), None);
    }

    #[test]
    fn the_tick_is_bounded() {
        assert_eq!(
            RULES.tick(),
            Duration::from_millis(7500).min(Duration::from_secs(5))
        );
        let short = IdleRules {
            idle: Duration::from_millis(100),
            pending: Duration::from_millis(40),
        };
        assert_eq!(short.tick(), Duration::from_millis(50));
        let mid = IdleRules {
            idle: Duration::from_secs(2),
            pending: Duration::from_secs(1),
        };
        assert_eq!(mid.tick(), Duration::from_millis(250));
    }
}
