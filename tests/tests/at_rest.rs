//! Secrets at rest (issue 15, item 1): the state directory is private
//! whatever the umask, an acknowledged answer's content is in no file of
//! it, and an answer not yet acknowledged survives `kill -9`, once.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use elicit_client::ClientSession;
use elicit_proto::dbus::{Broker1Proxy, Origin};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, eventually, within};
use serde_json::{Value, json};

const NOTE_FORM: &str = r#"{"message": "A note?", "requestedSchema": {"type": "object",
  "properties": {"note": {"type": "string"}}, "required": ["note"]}}"#;

/// The desktop's usual umask, under which sled used to create a
/// world-readable database.
fn usual_umask() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
}

/// Every file below `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// The files below `dir` whose bytes contain `needle`.
fn holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|file| {
            std::fs::read(file).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777
}

/// A value no other test or file could hold by chance.
fn distinctive(label: &str) -> String {
    format!(
        "SECRETVALUE_{label}_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_nanos()
    )
}

/// History holds form `form` once, as delivered.
async fn assert_delivered_once(broker: &Broker1Proxy<'_>, form: &str) {
    let history: Vec<Value> =
        serde_json::from_str(&broker.history(10).await.expect("history")).expect("JSON");
    let delivered: Vec<&Value> = history
        .iter()
        .filter(|h| h["form"].as_u64() == form.parse().ok())
        .collect();
    assert_eq!(delivered.len(), 1, "delivered once: {history:?}");
    assert_eq!(delivered[0]["delivered"], true);
}

async fn session(bus: &PrivateBus) -> (zbus::Connection, ClientSession) {
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some("at-rest".into()),
        ..Origin::default()
    };
    let session = ClientSession::open(&conn, &origin).await.expect("session");
    (conn, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_dir_is_private_whatever_the_umask() {
    usual_umask();
    let bus = PrivateBus::start();
    // A directory left wide open by an older version, with a file in it.
    let state = bus.dir().join("state");
    std::fs::create_dir(&state).expect("mkdir");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(state.join("old-notes"), b"x").expect("write");
    std::fs::set_permissions(state.join("old-notes"), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (_conn, mut client) = session(&bus).await;
    let form = client.submit(NOTE_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"note": "hello"}))
        .await
        .expect("answer");
    // Every kind of file now exists: sled's, and an answer's.
    assert!(daemon.state_dir().join("answers").join(&shown.form).exists());
    assert_eq!(mode(daemon.state_dir()), 0o700, "the state directory");
    for file in files(daemon.state_dir()) {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
        let parent = file.parent().expect("parent");
        assert_eq!(mode(parent), 0o700, "{}", parent.display());
    }
    let log = daemon.log();
    assert!(
        log.contains("other users could read this") && log.contains("old-notes"),
        "the tightening is announced: {log}"
    );
    client.wait(&form).await.expect("outcome");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_answer_is_in_no_file_of_the_state_dir() {
    usual_umask();
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (conn, mut client) = session(&bus).await;
    let secret = distinctive("ACKED");
    let form = client.submit(NOTE_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"note": secret}))
        .await
        .expect("answer");
    // Stored and announced, not yet acknowledged: the one copy is the
    // answer's own file; sled never had it, so no compaction can bring it
    // back.
    let answer_file = daemon.state_dir().join("answers").join(&shown.form);
    assert_eq!(
        holding(daemon.state_dir(), &secret),
        std::slice::from_ref(&answer_file)
    );
    let outcome = client.wait(&form).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"note": secret})));
    // Zeroed first, then unlinked: wait for both.
    eventually("the acknowledged answer to leave every file", || async {
        holding(daemon.state_dir(), &secret).is_empty() && !answer_file.exists()
    })
    .await;
    let broker = Broker1Proxy::new(&conn).await.expect("proxy");
    let history = broker.history(10).await.expect("history");
    assert!(
        history.contains("A note?") && !history.contains(&secret),
        "{history}"
    );
    // A restart writes and recovers; still nothing.
    daemon.restart().await;
    assert!(holding(daemon.state_dir(), &secret).is_empty());
    // Nor after the store has been churned by more forms.
    let (_conn, mut churn) = session(&bus).await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    for i in 0..20 {
        let form = churn.submit(NOTE_FORM, None, None).await.expect("submit");
        let shown = frontend.next_show().await;
        frontend
            .answer(&shown, "accept", json!({"note": format!("filler {i}")}))
            .await
            .expect("answer");
        churn.wait(&form).await.expect("outcome");
    }
    daemon.restart().await;
    assert!(holding(daemon.state_dir(), &secret).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unacknowledged_answer_survives_kill_9_and_is_delivered_once() {
    usual_umask();
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (conn, mut client) = session(&bus).await;
    let secret = distinctive("PENDING");
    let form = client.submit(NOTE_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({"note": secret}))
        .await
        .expect("answer");
    daemon.restart().await;
    let answer_file = daemon.state_dir().join("answers").join(&shown.form);
    assert!(answer_file.exists(), "the undelivered answer outlived kill -9");
    let outcome = within("the outcome after the restart", client.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(outcome.content, Some(json!({"note": secret})));
    let broker = Broker1Proxy::new(&conn).await.expect("proxy");
    eventually("the answer to be acknowledged and erased", || async {
        !answer_file.exists() && broker.list_forms().await.is_ok_and(|l| l == "[]")
    })
    .await;
    assert!(holding(daemon.state_dir(), &secret).is_empty());
    assert_delivered_once(&broker, &shown.form).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_content_needs_no_file_and_still_survives_kill_9_once() {
    usual_umask();
    let bus = PrivateBus::start();
    let mut daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let (conn, mut client) = session(&bus).await;
    let confirm = r#"{"message": "Go?", "requestedSchema": {"type": "object", "properties": {}}}"#;
    let form = client.submit(confirm, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    frontend
        .answer(&shown, "accept", json!({}))
        .await
        .expect("answer");
    // `{}` holds nothing typed: sled keeps it, no answer file is made.
    let answers = daemon.state_dir().join("answers");
    assert!(!answers.join(&shown.form).exists(), "an answer file for {{}}");
    daemon.restart().await;
    let outcome = within("the outcome after the restart", client.wait(&form))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "accept");
    assert_eq!(outcome.content, Some(json!({})));
    let broker = Broker1Proxy::new(&conn).await.expect("proxy");
    eventually("the answer to be acknowledged", || async {
        broker.list_forms().await.is_ok_and(|l| l == "[]")
    })
    .await;
    assert_delivered_once(&broker, &shown.form).await;
    assert!(std::fs::read_dir(&answers).expect("answers").next().is_none());
}
