//! The queue rules without a bus or a disk.

use std::collections::VecDeque;
use std::sync::Arc;

use elicit_proto::dbus::Origin;
use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, Limits};

use super::FormLimits;
use crate::core::state::live_form;
use crate::core::state::{Capabilities, Frontend, Presenter, Session, State};
use crate::store::{FormRecord, FormState, SessionRecord};

const FORM: &str = r#"{"message": "Name?", "requestedSchema": {"type": "object",
  "properties": {"name": {"type": "string"}}}}"#;

fn session(state: &mut State, id: &str) {
    state.sessions.insert(
        id.to_owned(),
        Session {
            record: SessionRecord {
                id: id.to_owned(),
                owner: format!(":owner.{id}"),
                resume_token: String::new(),
                origin: Origin::default(),
                opened_ms: 0,
            },
            queue: VecDeque::new(),
            forms: Default::default(),
            ending: false,
        },
    );
}

fn record(id: u64, session: &str) -> FormRecord {
    FormRecord {
        id,
        session: session.to_owned(),
        request: crate::store::RequestText::new(FORM).expect("JSON"),
        submission_id: None,
        state: FormState::Queued,
        answer: None,
        content_in_file: false,
        reason: None,
        answered_by: None,
        created_ms: id,
        deadline_ms: None,
    }
}

/// Admits a stored (ready) form.
fn submit(state: &mut State, id: u64, session: &str) {
    let request = Arc::new(Elicitation::parse_str(FORM, &Limits::default()).expect("valid"));
    let mut form = live_form(record(id, session), request);
    form.ready = true;
    state.admit(form);
}

fn frontend(state: &mut State, bus_name: &str, name: &str) {
    state.registrations += 1;
    state.frontends.insert(
        bus_name.to_owned(),
        Frontend {
            bus_name: bus_name.to_owned(),
            path: "/f".into(),
            name: name.to_owned(),
            capabilities: Capabilities::from_names(None),
            priority: 0,
            order: state.registrations,
        },
    );
}

/// Presents what can be, with tokens t1, t2, …; returns (form, front-end
/// name, token) of each.
fn present(state: &mut State, sessions: &[&str]) -> Vec<(u64, String, String)> {
    let mut n = 0;
    state
        .present_heads(sessions.iter().map(|s| (*s).to_owned()), &[], || {
            n += 1;
            format!("t{n}")
        })
        .shows
        .into_iter()
        .map(|show| (show.form, show.presenter.label, show.presenter.token))
        .collect()
}

/// Session "a" with forms 1 and 2, form 1 shown on "gtk" with token t1.
fn two_forms_one_on_gtk() -> State {
    let mut state = State::default();
    session(&mut state, "a");
    frontend(&mut state, ":1.1", "gtk");
    submit(&mut state, 1, "a");
    submit(&mut state, 2, "a");
    present(&mut state, &["a"]);
    state
}

fn answered(state: &State, id: u64) -> FormRecord {
    let mut record = state.forms[&id].record.clone();
    record.state = FormState::Answered;
    record.answer = Some(Answer::bare(ElicitationAction::Decline));
    record
}

#[test]
fn one_form_per_session_is_presented_in_submission_order() {
    let mut state = State::default();
    session(&mut state, "a");
    session(&mut state, "b");
    frontend(&mut state, ":1.1", "gtk");
    for id in [1, 2, 3] {
        submit(&mut state, id, "a");
    }
    submit(&mut state, 4, "b");
    let shown: Vec<u64> = present(&mut state, &["a", "b"])
        .into_iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(shown, [1, 4], "each session's head, one each");
    assert!(
        present(&mut state, &["a", "b"]).is_empty(),
        "nothing more while they are shown"
    );
    for next in [2, 3] {
        let head = next - 1;
        let presenter = state.settle(head, answered(&state, head)).expect("live");
        assert!(presenter.is_some(), "the settled form's presenter is handed back");
        assert_eq!(present(&mut state, &["a"])[0].0, next);
    }
    assert_eq!(state.pending(), 2, "the last form of a and the form of b");
}

#[test]
fn a_form_being_stored_finished_or_of_an_ending_session_is_not_presented() {
    let mut state = State::default();
    session(&mut state, "a");
    session(&mut state, "b");
    frontend(&mut state, ":1.1", "gtk");
    submit(&mut state, 1, "a");
    state.forms.get_mut(&1).expect("form").ready = false;
    assert!(present(&mut state, &["a"]).is_empty());
    state.forms.get_mut(&1).expect("form").ready = true;
    state.forms.get_mut(&1).expect("form").finishing = true;
    assert!(present(&mut state, &["a"]).is_empty());
    submit(&mut state, 2, "b");
    state.sessions.get_mut("b").expect("session").ending = true;
    assert!(present(&mut state, &["b"]).is_empty());
}

#[test]
fn a_passed_on_form_goes_to_another_front_end_never_back() {
    let mut state = State::default();
    session(&mut state, "a");
    frontend(&mut state, ":1.1", "notify");
    submit(&mut state, 1, "a");
    let (_, _, token) = present(&mut state, &["a"]).remove(0);
    assert!(matches!(
        state.pass_on(1, ":1.1", "wrong"),
        Err(Error::AccessDenied(_))
    ));
    assert!(matches!(
        state.pass_on(1, ":1.9", &token),
        Err(Error::AccessDenied(_))
    ));
    assert_eq!(
        state.pass_on(1, ":1.1", &token).expect("passed"),
        ("a".to_owned(), "notify".to_owned())
    );
    assert_eq!(state.forms[&1].record.state, FormState::Queued);
    let decided = state.present_heads(["a".to_owned()], &[], || "t".into());
    assert!(decided.shows.is_empty(), "not back to the passer");
    assert!(decided.unserved[0].contains("notify"), "nor to a started notify");
    frontend(&mut state, ":1.2", "tui");
    assert_eq!(present(&mut state, &["a"])[0].1, "tui");
}

#[test]
fn a_departed_front_end_s_forms_go_back_to_the_head_and_on() {
    let mut state = two_forms_one_on_gtk();
    let (gone, sessions) = state.frontend_gone(":1.1");
    assert_eq!(gone.map(|f| f.name).as_deref(), Some("gtk"));
    assert_eq!(sessions, ["a"]);
    assert_eq!(state.forms[&1].record.state, FormState::Queued);
    frontend(&mut state, ":1.2", "tui");
    assert_eq!(
        present(&mut state, &["a"])[0],
        (1, "tui".to_owned(), "t1".to_owned())
    );
}

#[test]
fn presentations_get_fresh_tokens() {
    let mut state = State::default();
    session(&mut state, "a");
    session(&mut state, "b");
    frontend(&mut state, ":1.1", "gtk");
    submit(&mut state, 1, "a");
    submit(&mut state, 2, "b");
    let tokens: Vec<String> = present(&mut state, &["a", "b"])
        .into_iter()
        .map(|s| s.2)
        .collect();
    assert_eq!(tokens, ["t1", "t2"]);
}

#[test]
fn only_the_head_that_is_stored_and_unanswered_may_be_claimed() {
    let mut state = two_forms_one_on_gtk();
    let claimer = |token: &str| Presenter {
        bus_name: ":1.5".into(),
        token: token.into(),
        label: "control client".into(),
        frontend_path: None,
    };
    assert!(matches!(state.claim(2, claimer("c")), Err(Error::WrongState(_))));
    assert!(matches!(state.claim(9, claimer("c")), Err(Error::NotFound(_))));
    let (_, _, previous, session) = state.claim(1, claimer("c")).expect("claimed");
    assert_eq!(
        previous.map(|p| p.label).as_deref(),
        Some("gtk"),
        "withdrawn from gtk"
    );
    assert_eq!(session, "a");
    assert_eq!(
        state.forms[&1].presenter.as_ref().map(|p| p.token.as_str()),
        Some("c")
    );
    state.forms.get_mut(&1).expect("form").finishing = true;
    assert!(matches!(state.claim(1, claimer("d")), Err(Error::WrongState(_))));
}

#[test]
fn removal_frees_the_place_and_shows_the_next() {
    let mut state = two_forms_one_on_gtk();
    let removed = state.remove_form(1).expect("removed");
    assert!(removed.presenter.is_some(), "its presenter is to be told");
    assert!(!state.sessions["a"].forms.contains(&1));
    assert_eq!(present(&mut state, &["a"])[0].0, 2);
    assert!(state.remove_form(1).is_none());
}

#[test]
fn a_restart_puts_presented_forms_back_in_their_queue_in_order() {
    let mut state = State::default();
    session(&mut state, "a");
    let request = Arc::new(Elicitation::parse_str(FORM, &Limits::default()).expect("valid"));
    for (id, stored) in [
        (1, FormState::Answered),
        (2, FormState::Presented),
        (3, FormState::Queued),
    ] {
        let mut record = record(id, "a");
        record.state = stored;
        state.restore(live_form(record, request.clone()));
    }
    assert_eq!(
        state.sessions["a"].queue,
        [2, 3],
        "the answered one waits in no queue"
    );
    assert_eq!(state.sessions["a"].forms.len(), 3);
    assert_eq!(state.forms[&2].record.state, FormState::Queued);
    frontend(&mut state, ":1.1", "gtk");
    assert_eq!(present(&mut state, &["a"])[0].0, 2);
}

#[test]
fn admission_keeps_the_limits() {
    let mut state = State::default();
    session(&mut state, "a");
    session(&mut state, "b");
    let limits = FormLimits {
        total: 3,
        per_session: 2,
        total_bytes: usize::MAX,
    };
    submit(&mut state, 1, "a");
    submit(&mut state, 2, "a");
    assert!(matches!(
        state.check_admission("a", limits, 1),
        Err(Error::LimitExceeded(_))
    ));
    assert!(state.check_admission("b", limits, 1).is_ok());
    assert!(matches!(
        state.check_admission("nobody", limits, 1),
        Err(Error::NotFound(_))
    ));
    submit(&mut state, 3, "b");
    assert!(matches!(
        state.check_admission("b", limits, 1),
        Err(Error::LimitExceeded(_))
    ));
    // An answered form keeps its place until delivered, but waits in no
    // queue.
    let mut form = state.remove_form(3).expect("form");
    form.record.state = FormState::Answered;
    state.admit(form);
    assert!(state.sessions["b"].queue.is_empty());
    assert!(state.sessions["b"].forms.contains(&3));
}

#[test]
fn admission_keeps_the_byte_budget_across_sessions() {
    let mut state = State::default();
    session(&mut state, "a");
    session(&mut state, "b");
    let each = record(0, "a").request.as_str().len();
    let limits = FormLimits {
        total: 100,
        per_session: 100,
        total_bytes: 2 * each + 10,
    };
    submit(&mut state, 1, "a");
    submit(&mut state, 2, "b");
    // Another session's form counts too: the budget is the broker's.
    assert!(state.check_admission("b", limits, 10).is_ok());
    let refused = state
        .check_admission("a", limits, 11)
        .expect_err("over the budget");
    assert!(matches!(&refused, Error::OverBudget(_)), "{refused}");
    assert!(refused.to_string().contains("forms-total-bytes"), "{refused}");
    // A form that ends gives its bytes back.
    state.remove_form(1).expect("form");
    assert!(state.check_admission("a", limits, each + 10).is_ok());
}
