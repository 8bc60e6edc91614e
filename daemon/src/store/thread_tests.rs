//! The storage thread's worker, driven directly: what its groups flush.

use super::*;
use crate::store::Batch;

fn registration(id: &str, reply: Option<tokio::sync::oneshot::Sender<Result<Outcome, StoreError>>>) -> Job {
    let mut batch = Batch::new();
    batch.put_registration(id, b"{}".to_vec());
    Job { batch, reply }
}

#[test]
fn a_group_nobody_waits_for_goes_with_the_next_flush() {
    let dir = tempfile::tempdir().expect("temp dir");
    let status = Arc::new(Status::default());
    let (mut worker, _) =
        Worker::open(dir.path(), SyncMode::Full, status.clone(), Arc::default()).expect("open");
    let before = status.flushes();
    worker.commit_group(vec![registration("1", None)]);
    worker.commit_group(vec![registration("2", None)]);
    assert_eq!(status.flushes(), before, "a delayed write was flushed alone");
    assert!(worker.unflushed, "the delayed writes wait for a flush");
    let (reply, stored) = tokio::sync::oneshot::channel();
    worker.commit_group(vec![registration("3", Some(reply))]);
    assert!(
        matches!(stored.blocking_recv(), Ok(Ok(_))),
        "the commit succeeded"
    );
    assert_eq!(status.flushes(), before + 1, "one flush for the three");
    assert!(!worker.unflushed);
    // The idle loop's empty group flushes what is left.
    worker.commit_group(vec![registration("4", None)]);
    worker.commit_group(Vec::new());
    assert_eq!(status.flushes(), before + 2);
    drop(worker);
    let (_worker, loaded) =
        Worker::open(dir.path(), SyncMode::Full, status, Arc::default()).expect("open again");
    let ids: Vec<&str> = loaded.registrations.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4"]);
}
