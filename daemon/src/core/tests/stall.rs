//! Issue 39 item 5: a front-end that leaves a `Show` unanswered (stopped
//! with Ctrl-Z) is set aside, not forgotten: its form goes elsewhere, it
//! is told to withdraw it, and its next reply or call brings it back.

use super::*;

/// The `Recall` effects: (front-end, form).
fn recalls(effects: &[Effect]) -> Vec<(String, u64)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Recall { bus_name, form, .. } => Some((bus_name.clone(), *form)),
            _ => None,
        })
        .collect()
}

/// A session of `:1.1` with a form shown to one of two front-ends,
/// `:1.8` (tui) and `:1.9` (gtk): (session, form, the one showing it, the
/// other).
fn shown_to_one_of_two(t: &mut T) -> (String, u64, String, String) {
    let session = t.open(":1.1");
    t.call(":1.8", Call::RegisterFrontend(frontend("tui")));
    t.call(":1.9", Call::RegisterFrontend(frontend("gtk")));
    let (form, effects) = t.submit(":1.1", &session);
    let (_, first, _) = shows(&effects).remove(0);
    let other = if first == ":1.8" { ":1.9" } else { ":1.8" };
    (session, form, first, other.to_owned())
}

#[test]
fn an_unanswered_show_moves_the_form_and_recalls_it_from_the_slow_front_end() {
    let mut t = T::new();
    let (_, form, slow, other) = shown_to_one_of_two(&mut t);
    let effects = t.input(Input::ShowUnanswered {
        form,
        bus_name: slow.clone(),
    });
    assert_eq!(recalls(&effects), [(slow.clone(), form)]);
    let moved: Vec<(u64, String)> = shows(&effects).into_iter().map(|(f, b, _)| (f, b)).collect();
    assert_eq!(moved, [(form, other.clone())]);
    assert!(t.core.state().is_stalled(&slow));
    assert_eq!(t.core.state().counts().2, 1, "Frontends counts the one serving");
    // A form of another session goes to the one serving, not the slow one.
    let session = t.open(":1.2");
    let (next, effects) = t.submit(":1.2", &session);
    let to: Vec<String> = shows(&effects).into_iter().map(|(_, b, _)| b).collect();
    assert_eq!(to, [other], "form {next}");
}

#[test]
fn its_reply_to_the_recall_brings_it_back_and_later_forms_reach_it() {
    let mut t = T::new();
    let (_, form, slow, other) = shown_to_one_of_two(&mut t);
    t.input(Input::ShowUnanswered {
        form,
        bus_name: slow.clone(),
    });
    let effects = t.input(Input::FrontendAnswered(slow.clone()));
    assert!(shows(&effects).is_empty(), "the form stays where it went");
    assert_eq!(t.core.state().counts().2, 2, "Frontends restored");
    // The other leaves: the next form reaches the one that came back.
    t.input(Input::NameLost(other));
    let session = t.open(":1.2");
    let (_, effects) = t.submit(":1.2", &session);
    let to: Vec<String> = shows(&effects).into_iter().map(|(_, b, _)| b).collect();
    assert!(to.contains(&slow), "{to:?}");
}

#[test]
fn any_call_brings_it_back_and_its_stale_token_is_refused() {
    let mut t = T::new();
    let (_, form, slow, _) = shown_to_one_of_two(&mut t);
    let effects = t.input(Input::ShowUnanswered {
        form,
        bus_name: slow.clone(),
    });
    let _ = effects;
    let stale = t.core.state().form(&form).and_then(|f| f.presenter.clone());
    let stale_token = stale.map(|p| p.token).unwrap_or_default();
    // Its answer comes with a token of the presentation it had, which is
    // no longer honoured: the form is presented to the other, whose token
    // differs. The call itself brings the front-end back.
    let (call, effects) = t.call(&slow, answer(form, "its-old-token"));
    assert!(matches!(reply(&effects, call), Some(Err(_))), "{effects:?}");
    assert_ne!(stale_token, "its-old-token");
    assert!(!t.core.state().is_stalled(&slow));
    let (call, effects) = t.call(&slow, Call::Counts);
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Counts(_, _, 2)))));
}

#[test]
fn with_no_other_front_end_the_form_waits_for_it_and_returns_to_it() {
    let mut t = T::new();
    let session = t.open(":1.1");
    t.call(":1.8", Call::RegisterFrontend(frontend("tui")));
    let (form, _) = t.submit(":1.1", &session);
    let effects = t.input(Input::ShowUnanswered {
        form,
        bus_name: ":1.8".into(),
    });
    assert_eq!(recalls(&effects), [(":1.8".to_owned(), form)]);
    assert!(shows(&effects).is_empty());
    let unwanted: Vec<&std::collections::HashSet<String>> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Launch(unwanted) => Some(unwanted),
            _ => None,
        })
        .collect();
    assert_eq!(
        unwanted.len(),
        1,
        "another program is started meanwhile: {effects:?}"
    );
    assert!(
        unwanted[0].contains("tui"),
        "not a second copy of the stopped one"
    );
    assert_eq!(t.core.state().counts().2, 0);
    let effects = t.input(Input::FrontendAnswered(":1.8".into()));
    let again: Vec<(u64, String)> = shows(&effects).into_iter().map(|(f, b, _)| (f, b)).collect();
    assert_eq!(
        again,
        [(form, ":1.8".to_owned())],
        "shown again, with a new token"
    );
}

#[test]
fn a_front_end_set_aside_that_leaves_is_forgotten_and_repeats_change_nothing() {
    let mut t = T::new();
    let (_, form, slow, _) = shown_to_one_of_two(&mut t);
    t.input(Input::ShowUnanswered {
        form,
        bus_name: slow.clone(),
    });
    let effects = t.input(Input::ShowUnanswered {
        form,
        bus_name: slow.clone(),
    });
    assert!(effects.is_empty(), "set aside once: {effects:?}");
    t.input(Input::NameLost(slow.clone()));
    assert!(!t.core.state().is_stalled(&slow));
    let effects = t.input(Input::FrontendAnswered(slow.clone()));
    assert!(effects.is_empty(), "a front-end gone does not come back");
    assert_eq!(t.core.state().counts().2, 1);
}
