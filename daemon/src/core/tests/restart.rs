//! The core in memory across idleness, resumption, restarts and limits.

use super::*;

#[test]
fn idle_the_core_gives_up_its_name_and_leaves_unless_a_call_came() {
    let mut config = testkit::config();
    config.broker.exit_on_idle_secs = 60;
    let mut t = T::with(config);
    assert_eq!(t.core.next_timeout(), Some(60_000));
    t.now = 60_000;
    let effects = t.input(Input::Timer);
    assert!(matches!(effects[..], [Effect::ReleaseName]));
    let effects = t.input(Input::NameReleased { busy: true });
    assert!(matches!(effects[..], [Effect::RequestName]));
    t.now = 120_000;
    t.input(Input::Timer);
    let effects = t.input(Input::NameReleased { busy: false });
    assert!(matches!(effects[..], [Effect::Exit]));

    let session_keeps_it = {
        let mut config = testkit::config();
        config.broker.exit_on_idle_secs = 60;
        let mut t = T::with(config);
        t.open(":1.1");
        t.core.next_timeout()
    };
    assert_eq!(session_keeps_it, None);
}

#[test]
fn a_resume_needs_the_proof_of_the_last_challenge() {
    let mut t = T::new();
    let (call, effects) = t.call(":1.1", Call::OpenSession(Default::default()));
    let effects = t.settle(effects);
    let Some(Ok(Reply::Session { path, token })) = reply(&effects, call) else {
        panic!("no session")
    };
    let session = path.rsplit('/').next().unwrap().to_owned();
    let nonce = vec![1u8; 32];
    let (call, effects) = t.call(
        ":1.2",
        Call::ProveSession {
            session: session.clone(),
            nonce: nonce.clone(),
        },
    );
    let Some(Ok(Reply::Challenge { proof, challenge })) = reply(&effects, call) else {
        panic!("no challenge")
    };
    use elicit_proto::trust::{Role, proof as hmac, verify};
    assert!(verify(
        &token,
        Role::BrokerToClient,
        &session,
        ":1.0",
        &nonce,
        &proof
    ));
    let (call, effects) = t.call(
        ":1.2",
        Call::ResumeProven {
            session: session.clone(),
            proof: vec![0; 32],
        },
    );
    assert!(matches!(reply(&effects, call), Some(Err(_))));
    let (call, effects) = t.call(
        ":1.2",
        Call::ProveSession {
            session: session.clone(),
            nonce,
        },
    );
    let Some(Ok(Reply::Challenge { challenge: again, .. })) = reply(&effects, call) else {
        panic!("no challenge")
    };
    assert_ne!(challenge, again);
    let right = hmac(&token, Role::ClientToBroker, &session, ":1.2", &again);
    let (call, effects) = t.call(
        ":1.2",
        Call::ResumeProven {
            session,
            proof: right,
        },
    );
    let effects = t.settle(effects);
    assert!(matches!(reply(&effects, call), Some(Ok(Reply::Path(_)))));
}

#[test]
fn a_restart_puts_shown_forms_back_and_starts_the_grace_of_owners_gone() {
    let mut t = T::new();
    let session = t.open(":1.1");
    t.call(":1.9", Call::RegisterFrontend(frontend("gtk")));
    let (form, _) = t.submit(":1.1", &session);
    let mut sessions = Vec::new();
    let mut forms = Vec::new();
    for s in t.core.state().sessions() {
        sessions.push(s.record.clone());
    }
    for f in t.core.state().forms() {
        forms.push((f.record.clone(), false));
    }
    assert_eq!(forms[0].0.state, FormState::Presented);
    let mut again = testkit::core(testkit::config());
    let restored = Restored {
        sessions,
        forms,
        next_id: 100,
        ..Restored::default()
    };
    let ((s, f), effects) = again.restore(0, restored, &HashSet::new());
    assert_eq!((s, f), (1, 1));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Export(crate::core::Object::Form(_, id)) if *id == form))
    );
    assert_eq!(again.state().form(&form).unwrap().record.state, FormState::Queued);
    assert_eq!(again.next_timeout(), Some(1000), "the owner is gone: its grace");
}

#[test]
fn the_limits_hold_for_sessions_being_opened_and_forms_being_stored() {
    let mut config = testkit::config();
    config.broker.sessions_per_connection = 1;
    config.broker.forms_per_session = 1;
    let mut t = T::with(config);
    let (_, first) = t.call(":1.1", Call::OpenSession(Default::default()));
    let (call, effects) = t.call(":1.1", Call::OpenSession(Default::default()));
    assert!(matches!(reply(&effects, call), Some(Err(e)) if e.contains("sessions-per-connection")));
    t.settle(first);
    let session = t.core.state().sessions().next().unwrap().record.id.clone();
    let (_, pending) = t.call(":1.1", elicit(&session, None, None));
    let (call, effects) = t.call(":1.1", elicit(&session, None, None));
    assert!(matches!(reply(&effects, call), Some(Err(e)) if e.contains("forms-per-session")));
    t.settle(pending);
}

#[test]
fn more_connections_buy_no_more_sessions_than_the_uid_limit() {
    let mut config = testkit::config();
    config.broker.sessions_per_uid = 2;
    let mut t = T::with(config);
    t.open(":1.1");
    let (_, pending) = t.call(":1.2", Call::OpenSession(Default::default()));
    let (call, effects) = t.call(":1.3", Call::OpenSession(Default::default()));
    assert!(matches!(reply(&effects, call), Some(Err(e)) if e.contains("sessions-per-uid")));
    t.settle(pending);
    assert_eq!(t.core.state().sessions().count(), 2);
}
