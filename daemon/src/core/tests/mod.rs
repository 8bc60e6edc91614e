//! The broker's rules in memory: no bus, no disk, no clock.

use std::collections::HashSet;

use super::testkit::{self, caller, elicit, form_of, frontend, reply, writes};
use super::{Call, Core, Effect, Input, Reply, Restored, Write};
use crate::config::Config;
use crate::store::FormState;

mod admission;
mod restart;
mod stall;

/// A core and the calls made to it.
struct T {
    core: Core,
    now: u64,
    next_call: u64,
}

impl T {
    fn new() -> T {
        T::with(testkit::config())
    }

    fn with(config: Config) -> T {
        T {
            core: testkit::core(config),
            now: 0,
            next_call: 1,
        }
    }

    fn input(&mut self, input: Input) -> Vec<Effect> {
        self.core.handle(self.now, input)
    }

    fn call(&mut self, who: &str, call: Call) -> (u64, Vec<Effect>) {
        let id = self.next_call;
        self.next_call += 1;
        let effects = self.input(Input::Call {
            id,
            caller: caller(who),
            call,
        });
        (id, effects)
    }

    /// Reports every awaited batch of `effects` stored, and of what that
    /// brings, until nothing waits; returns every effect seen.
    fn settle(&mut self, mut effects: Vec<Effect>) -> Vec<Effect> {
        let mut seen = Vec::new();
        loop {
            let batches: Vec<u64> = writes(&effects)
                .into_iter()
                .filter(|(_, _, lazy)| !lazy)
                .map(|(b, _, _)| b)
                .collect();
            seen.append(&mut effects);
            if batches.is_empty() {
                return seen;
            }
            for batch in batches {
                effects.extend(self.input(Input::Stored(batch)));
            }
        }
    }

    /// Opens a session for `who`; returns its id.
    fn open(&mut self, who: &str) -> String {
        let (id, effects) = self.call(who, Call::OpenSession(Default::default()));
        let effects = self.settle(effects);
        match reply(&effects, id) {
            Some(Ok(Reply::Session { path, .. })) => path.rsplit('/').next().unwrap().to_owned(),
            other => panic!("no session: {other:?}"),
        }
    }

    /// Submits a form to `session` and stores it; returns its id.
    fn submit(&mut self, who: &str, session: &str) -> (u64, Vec<Effect>) {
        let (id, effects) = self.call(who, elicit(session, None, None));
        let effects = self.settle(effects);
        match reply(&effects, id) {
            Some(Ok(Reply::Path(path))) => (form_of(&path).unwrap(), effects),
            other => panic!("not queued: {other:?}"),
        }
    }
}

/// The `Show` effects: (form, front-end bus name, token).
fn shows(effects: &[Effect]) -> Vec<(u64, String, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Show(show) => Some((
                show.form,
                show.presenter.bus_name.clone(),
                show.presenter.token.clone(),
            )),
            _ => None,
        })
        .collect()
}

fn responses(effects: &[Effect]) -> Vec<(u64, String, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Response(signal) => Some((signal.form, signal.owner.clone(), signal.reason.clone())),
            _ => None,
        })
        .collect()
}

fn history(effects: &[Effect]) -> Vec<(u64, String, bool)> {
    writes(effects)
        .into_iter()
        .flat_map(|(_, w, _)| w)
        .filter_map(|w| match w {
            Write::History(h) => Some((h.form, h.reason, h.delivered)),
            _ => None,
        })
        .collect()
}

fn answer(form: u64, token: &str) -> Call {
    Call::Answer {
        form,
        token: token.to_owned(),
        action: "accept".into(),
        content: r#"{"name": "Ada"}"#.into(),
        remember: super::Remember::No,
    }
}

#[test]
fn a_session_and_a_form_are_replied_to_only_once_stored() {
    let mut t = T::new();
    let (call, effects) = t.call(":1.1", Call::OpenSession(Default::default()));
    assert!(
        reply(&effects, call).is_none(),
        "no reply before the batch is stored"
    );
    let (batch, w, lazy) = writes(&effects).remove(0);
    assert!(!lazy && matches!(w[0], Write::PutSession(_)));
    let effects = t.input(Input::Stored(batch));
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Session { .. }))));
    let session = t.core.state().sessions().next().unwrap().record.id.clone();

    let (call, effects) = t.call(":1.1", elicit(&session, None, None));
    assert!(reply(&effects, call).is_none());
    assert_eq!(t.core.state().pending(), 0, "not listed before it is stored");
    let (batch, _, _) = writes(&effects).remove(0);
    let effects = t.input(Input::Stored(batch));
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Path(_)))));
    assert_eq!(t.core.state().pending(), 1);
}

#[test]
fn a_failed_batch_changes_nothing_and_replies_storage() {
    let mut t = T::new();
    let (call, effects) = t.call(":1.1", Call::OpenSession(Default::default()));
    let (batch, _, _) = writes(&effects).remove(0);
    let effects = t.input(Input::Failed {
        batch,
        error: "No space left on device".into(),
    });
    match reply(&effects, call) {
        Some(Err(error)) => assert!(error.contains("No space left on device"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(t.core.state().sessions().count(), 0);

    let session = t.open(":1.1");
    let (call, effects) = t.call(":1.1", elicit(&session, None, None));
    let (batch, _, _) = writes(&effects).remove(0);
    let effects = t.input(Input::Failed {
        batch,
        error: "full".into(),
    });
    assert!(matches!(reply(&effects, call), Some(Err(_))));
    assert!(t.core.state().forms().next().is_none(), "the form is gone");
    assert!(
        writes(&effects)
            .iter()
            .any(|(_, w, lazy)| *lazy && matches!(w[0], Write::RemoveForm(_))),
        "and so is whatever a late write left"
    );
}

#[test]
fn one_form_per_session_is_shown_and_the_next_after_its_answer_is_stored() {
    let mut t = T::new();
    let session = t.open(":1.1");
    let (_, effects) = t.call(":1.9", Call::RegisterFrontend(frontend("gtk")));
    assert!(shows(&effects).is_empty());
    let (first, effects) = t.submit(":1.1", &session);
    let shown = shows(&effects);
    assert_eq!(shown.len(), 1);
    let (second, effects) = t.submit(":1.1", &session);
    assert!(shows(&effects).is_empty(), "the first is still shown");

    let (call, effects) = t.call(":1.9", answer(first, "wrong"));
    assert!(matches!(reply(&effects, call), Some(Err(_))));
    let (call, effects) = t.call(":1.9", answer(first, &shown[0].2));
    assert!(
        responses(&effects).is_empty(),
        "no Response before the answer is stored"
    );
    let effects = t.settle(effects);
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Done))));
    assert_eq!(
        responses(&effects),
        [(first, ":1.1".to_owned(), "answered".to_owned())]
    );
    assert_eq!(shows(&effects)[0].0, second, "the next form follows");
}

#[test]
fn a_deadline_wakes_the_core_and_cancels_with_timeout() {
    let mut t = T::new();
    let session = t.open(":1.1");
    let (call, effects) = t.call(":1.1", elicit(&session, None, Some(5)));
    let effects = t.settle(effects);
    let form = match reply(&effects, call) {
        Some(Ok(Reply::Path(path))) => form_of(&path).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(t.core.next_timeout(), Some(5000));
    t.now = 5000;
    let effects = t.input(Input::Timer);
    let effects = t.settle(effects);
    assert_eq!(
        responses(&effects),
        [(form, ":1.1".to_owned(), "timeout".to_owned())]
    );
    assert_eq!(t.core.next_timeout(), None);
}

#[test]
fn an_expiry_that_cannot_be_stored_is_tried_again() {
    let mut t = T::new();
    let session = t.open(":1.1");
    let (call, effects) = t.call(":1.1", elicit(&session, None, Some(1)));
    let effects = t.settle(effects);
    assert!(reply(&effects, call).is_some());
    t.now = 1000;
    let effects = t.input(Input::Timer);
    let (batch, _, _) = writes(&effects).remove(0);
    let effects = t.input(Input::Failed {
        batch,
        error: "full".into(),
    });
    assert!(responses(&effects).is_empty());
    assert_eq!(t.core.next_timeout(), Some(2000), "a second later");
    t.now = 2000;
    let effects = t.input(Input::Timer);
    let effects = t.settle(effects);
    assert_eq!(responses(&effects).len(), 1);
}

#[test]
fn a_departed_client_s_sessions_end_after_the_grace_and_are_withdrawn() {
    let mut t = T::new();
    let session = t.open(":1.1");
    t.call(":1.9", Call::RegisterFrontend(frontend("gtk")));
    let (form, _) = t.submit(":1.1", &session);
    t.input(Input::NameLost(":1.1".into()));
    assert_eq!(t.core.next_timeout(), Some(1000), "the grace period");
    t.now = 1000;
    let effects = t.input(Input::Timer);
    let effects = t.settle(effects);
    let withdrawn: Vec<(u64, String)> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Withdraw { form, reason, .. } => Some((*form, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(withdrawn, [(form, "client-gone".to_owned())]);
    assert_eq!(history(&effects), [(form, "client-gone".to_owned(), false)]);
    assert_eq!(t.core.state().sessions().count(), 0);
}

#[test]
fn a_client_that_resumes_within_the_grace_keeps_its_session() {
    let mut t = T::new();
    let (call, effects) = t.call(":1.1", Call::OpenSession(Default::default()));
    let effects = t.settle(effects);
    let Some(Ok(Reply::Session { token, .. })) = reply(&effects, call) else {
        panic!("no session")
    };
    t.input(Input::NameLost(":1.1".into()));
    let (call, effects) = t.call(":1.2", Call::ResumeSession(token));
    let effects = t.settle(effects);
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Path(_)))));
    t.now = 1000;
    let effects = t.input(Input::Timer);
    assert!(writes(&effects).is_empty(), "nothing ends");
    assert_eq!(t.core.state().sessions_of(":1.2").count(), 1);
}

#[test]
fn a_front_end_that_fails_to_show_is_dropped_and_the_form_goes_to_the_next() {
    let mut t = T::new();
    let session = t.open(":1.1");
    t.call(":1.8", Call::RegisterFrontend(frontend("tui")));
    t.call(":1.9", Call::RegisterFrontend(frontend("gtk")));
    let (form, effects) = t.submit(":1.1", &session);
    let (_, first, _) = shows(&effects).remove(0);
    let effects = t.input(Input::ShowFailed {
        form,
        bus_name: first.clone(),
    });
    let (_, second, _) = shows(&effects).remove(0);
    assert_ne!(first, second);
    assert_eq!(t.core.state().counts().2, 1, "one front-end left");
}

#[test]
fn a_retry_with_the_same_submission_id_gets_the_same_form_once_stored() {
    let mut t = T::new();
    let session = t.open(":1.1");
    let (first, effects) = t.call(":1.1", elicit(&session, Some("s1"), None));
    let (retry, more) = t.call(":1.1", elicit(&session, Some("s1"), None));
    assert!(reply(&more, retry).is_none(), "waits for the first's batch");
    assert!(writes(&more).is_empty(), "and writes nothing of its own");
    let effects = t.settle(effects);
    let (Some(Ok(Reply::Path(a))), Some(Ok(Reply::Path(b)))) =
        (reply(&effects, first), reply(&effects, retry))
    else {
        panic!("both replied")
    };
    assert_eq!(a, b);
    let (again, effects) = t.call(":1.1", elicit(&session, Some("s1"), None));
    assert!(matches!(reply(&effects, again), Some(Ok(Reply::Path(c))) if c == a));
    assert_eq!(t.core.state().forms().count(), 1);
}

/// Issue 28 item 5: an acknowledgement racing the session's close wrote
/// a second history record.
#[test]
fn a_form_gets_exactly_one_history_record_when_its_acknowledgement_races_the_close() {
    for ack_first in [true, false] {
        let mut t = T::new();
        let session = t.open(":1.1");
        t.call(":1.9", Call::RegisterFrontend(frontend("gtk")));
        let (form, effects) = t.submit(":1.1", &session);
        let token = shows(&effects).remove(0).2;
        let (_, effects) = t.call(":1.9", answer(form, &token));
        t.settle(effects);
        let mut seen = Vec::new();
        let (close, ack) = if ack_first {
            let (ack, a) = t.call(":1.1", Call::Acknowledge(form));
            let (close, c) = t.call(":1.1", Call::CloseSession(session.clone()));
            seen.extend(a);
            seen.extend(c);
            (close, ack)
        } else {
            // The close's batch is in flight when the acknowledgement comes.
            let (close, c) = t.call(":1.1", Call::CloseSession(session.clone()));
            let (ack, a) = t.call(":1.1", Call::Acknowledge(form));
            seen.extend(c);
            seen.extend(a);
            (close, ack)
        };
        let seen = t.settle(seen);
        let records: Vec<_> = history(&seen).into_iter().filter(|h| h.0 == form).collect();
        assert_eq!(records.len(), 1, "ack first: {ack_first}: {records:?}");
        assert!(matches!(reply(&seen, close), Some(Ok(Reply::Done))));
        assert!(reply(&seen, ack).is_some());
        assert_eq!(t.core.state().sessions().count(), 0);
    }
}

#[test]
fn a_failed_close_leaves_the_session_and_its_forms_as_they_were() {
    let mut t = T::new();
    let session = t.open(":1.1");
    let (form, _) = t.submit(":1.1", &session);
    let (call, effects) = t.call(":1.1", Call::CloseSession(session.clone()));
    let (batch, _, _) = writes(&effects).remove(0);
    let effects = t.input(Input::Failed {
        batch,
        error: "full".into(),
    });
    assert!(matches!(reply(&effects, call), Some(Err(_))));
    assert!(t.core.state().form(&form).is_some());
    let (call, effects) = t.call(":1.1", Call::CloseSession(session));
    let effects = t.settle(effects);
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Done))));
    assert!(t.core.state().form(&form).is_none());
}
