//! Issue 39: what `Elicit` checks before anything is parsed, the byte
//! budget across all forms, and the list in pages.

use super::super::testkit::{self, reply};
use super::{Call, Reply, T};

fn admissible(session: &str, bytes: usize, sid: Option<&str>) -> Call {
    Call::Admissible {
        session: session.to_owned(),
        bytes,
        submission_id: sid.map(str::to_owned),
    }
}

/// The error text of `call`'s immediate reply.
fn refused(t: &mut T, who: &str, call: Call) -> String {
    let (id, effects) = t.call(who, call);
    match reply(&effects, id) {
        Some(Err(error)) => error,
        other => panic!("not refused: {other:?}"),
    }
}

fn admitted(t: &mut T, who: &str, call: Call) -> bool {
    let (id, effects) = t.call(who, call);
    matches!(reply(&effects, id), Some(Ok(Reply::Origin(_))))
}

/// The checks come in the order of `Elicit`'s own: ownership first (a
/// stranger learns nothing of the session's quota), then the session's
/// state, then the quotas and the byte budget; a retry of a stored form
/// passes them all, as `Elicit` lets it.
#[test]
fn admission_refuses_in_elicit_s_order_before_any_parse() {
    let mut config = testkit::config();
    config.broker.forms_per_session = 1;
    let mut t = T::with(config);
    let session = t.open(":1.1");
    assert!(admitted(&mut t, ":1.1", admissible(&session, 10, None)));
    let (_, effects) = t.call(":1.1", testkit::elicit(&session, Some("s1"), None));
    t.settle(effects);
    let stranger = refused(&mut t, ":1.2", admissible(&session, 10, None));
    assert!(stranger.contains("another client"), "{stranger}");
    let full = refused(&mut t, ":1.1", admissible(&session, 10, None));
    assert!(full.contains("forms-per-session"), "{full}");
    assert!(admitted(&mut t, ":1.1", admissible(&session, 10, Some("s1"))));
    let nobody = refused(&mut t, ":1.1", admissible("999", 10, None));
    assert!(nobody.contains("no session"), "{nobody}");
}

/// `broker.forms-total-bytes` counts every session's forms; `Admissible`
/// and `Elicit` refuse past it with `OverBudget`, and an ended form gives
/// its bytes back.
#[test]
fn the_byte_budget_holds_across_sessions() {
    let (_, text) = testkit::request();
    let each = text.as_str().len();
    let mut config = testkit::config();
    config.broker.forms_total_bytes = 2 * each;
    let mut t = T::with(config);
    let a = t.open(":1.1");
    let b = t.open(":1.2");
    t.submit(":1.1", &a);
    t.submit(":1.2", &b);
    let over = refused(&mut t, ":1.1", admissible(&a, each, None));
    assert!(over.starts_with("over the broker's byte budget"), "{over}");
    assert!(over.contains("broker.forms-total-bytes"), "{over}");
    let over = refused(&mut t, ":1.2", testkit::elicit(&b, None, None));
    assert!(over.starts_with("over the broker's byte budget"), "{over}");
    let (id, effects) = t.call(":1.2", Call::CloseSession(b.clone()));
    let effects = t.settle(effects);
    assert!(matches!(reply(&effects, id), Some(Ok(_))));
    assert!(admitted(&mut t, ":1.1", admissible(&a, each, None)));
}

/// Pages carry every form once, in id order, whatever their size: each
/// has at least one form and stops before the bound otherwise.
#[test]
fn the_list_comes_in_pages_that_fit() {
    let mut config = testkit::config();
    config.broker.forms_per_session = 64;
    let mut t = T::with(config);
    let session = t.open(":1.1");
    let ids: Vec<u64> = (0..20).map(|_| t.submit(":1.1", &session).0).collect();
    let one = t.core.page(0, None, false, 1).json.len();
    let mut listed = Vec::new();
    let mut after = None;
    loop {
        // Room for about three forms a page.
        let page = t.core.page(0, after, false, 3 * one);
        assert!(page.json.len() <= 3 * one + 2, "{}", page.json);
        let forms: Vec<serde_json::Value> = serde_json::from_str(&page.json).expect("JSON");
        assert!(!forms.is_empty());
        listed.extend(forms.iter().filter_map(|f| f["id"].as_u64()));
        after = listed.last().copied();
        if !page.more {
            break;
        }
    }
    assert_eq!(listed, ids);
    // Brief entries leave out what a server chose the size of.
    let brief = t.core.page(0, None, true, usize::MAX);
    let forms: Vec<serde_json::Value> = serde_json::from_str(&brief.json).expect("JSON");
    assert_eq!(forms.len(), 20);
    assert!(
        forms
            .iter()
            .all(|f| f.get("fields").is_none() && f.get("message").is_none())
    );
    assert!(forms.iter().all(|f| f["state"].is_string()));
}
