//! The storage thread in process: what is committed comes back after a
//! restart, ids never repeat, and lazy writes are flushed.

use std::time::{Duration, Instant};

use elicit_proto::{Answer, ElicitationAction};

use super::*;

fn form(id: u64, content: Option<serde_json::Value>) -> FormRecord {
    FormRecord {
        id,
        session: "s".into(),
        request: RequestText::new(r#"{"message":"Go?"}"#).expect("JSON"),
        submission_id: None,
        state: FormState::Answered,
        answer: Some(Answer {
            action: ElicitationAction::Accept,
            content,
        }),
        content_in_file: false,
        reason: Some("answered".into()),
        answered_by: None,
        created_ms: 1,
        deadline_ms: None,
    }
}

/// Opens the store in `dir`, waiting (with a deadline) for the thread of
/// a store dropped a moment ago to let go of sled's lock.
async fn open(dir: &Path) -> (Store, Loaded) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Store::open(dir, SyncMode::Full).await {
            Ok(opened) => return opened,
            Err(error) if Instant::now() < deadline => {
                tracing::debug!(%error, "not yet");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("the store does not open again: {error}"),
        }
    }
}

#[tokio::test]
async fn a_committed_batch_comes_back_after_a_restart_with_its_content_from_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, loaded) = open(dir.path()).await;
    assert!(loaded.forms.is_empty());
    let id = store.next_id();
    let mut batch = Batch::new();
    let in_file = batch.put_form(&form(id, Some(serde_json::json!({"note": "typed"}))));
    assert!(in_file, "a content with a value goes to a file");
    store.commit(batch).await.expect("commit");
    assert!(dir.path().join("answers").join(id.to_string()).exists());
    drop(store);
    let (store, loaded) = open(dir.path()).await;
    let (record, erased) = &loaded.forms[0];
    assert!(!erased);
    assert_eq!(record.id, id);
    assert_eq!(
        record.answer.as_ref().and_then(|a| a.content.clone()),
        Some(serde_json::json!({"note": "typed"}))
    );
    assert_eq!(loaded.answer_files, [id]);
    assert!(store.next_id() > id, "an id came back");
}

#[tokio::test]
async fn ids_never_repeat_across_restarts_even_when_no_record_holds_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, _) = open(dir.path()).await;
    let mut last = 0;
    for _ in 0..100 {
        last = store.next_id();
    }
    // The counter goes with any group, an empty one included.
    store.flush().await.expect("flush");
    drop(store);
    let (store, _) = open(dir.path()).await;
    assert!(store.next_id() > last);
}

#[tokio::test]
async fn a_lazy_write_is_durable_after_a_flush_and_history_keeps_its_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, _) = open(dir.path()).await;
    for form in 1..=5u64 {
        let mut batch = Batch::new();
        batch.add_history(
            HistoryRecord {
                form,
                session: "s".into(),
                origin: Default::default(),
                mode: "form".into(),
                message: "Go?".into(),
                fields: Vec::new(),
                url_host: None,
                outcome: "accept".into(),
                reason: "answered".into(),
                answered_by: None,
                delivered: true,
                created_ms: form,
                finished_ms: form,
            },
            3,
        );
        store.write_soon(batch);
    }
    store.flush().await.expect("flush");
    let history = store.history(10).await.expect("history");
    let forms: Vec<u64> = history.iter().map(|h| h.form).collect();
    assert_eq!(forms, [5, 4, 3], "newest first, the oldest dropped");
}

#[tokio::test]
async fn registrations_come_back_after_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, _) = open(dir.path()).await;
    let mut batch = Batch::new();
    batch.put_registration("7", b"{}".to_vec());
    store.commit(batch).await.expect("commit");
    drop(store);
    let (store, loaded) = open(dir.path()).await;
    assert_eq!(loaded.registrations, [("7".to_owned(), b"{}".to_vec())]);
    let mut batch = Batch::new();
    batch.remove_registration("7");
    store.write_soon(batch);
    store.flush().await.expect("flush");
    drop(store);
    let (_store, loaded) = open(dir.path()).await;
    assert!(loaded.registrations.is_empty());
}

#[tokio::test]
async fn a_delayed_write_alone_is_flushed_within_its_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (store, _) = open(dir.path()).await;
    let before = store.shared.status.flushes();
    let mut batch = Batch::new();
    batch.put_registration("9", b"{}".to_vec());
    store.write_soon(batch);
    let deadline = Instant::now() + Duration::from_secs(5);
    while store.shared.status.flushes() == before {
        assert!(Instant::now() < deadline, "a delayed write was never flushed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
