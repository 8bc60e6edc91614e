//! A full state directory (issue 14, storage faults): a change shows only
//! once its write succeeded, a failed write is a `Storage` error naming
//! the cause and changes nothing, what needs no new space keeps working,
//! service comes back by itself once space is freed, and SIGTERM stops the
//! daemon within 2 s even while the disk is full.
//!
//! The state directory is a 2 MiB tmpfs filled with a file: mounting needs
//! root, which CI gives.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use elicit_client::ClientSession;
use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, Origin};
use elicit_tests::procs::terminated_within;
use elicit_tests::{Daemon, PrivateBus, TestFrontend, eventually, within};
use serde_json::{Value, json};

const NOTE_FORM: &str = r#"{"message": "A note?", "requestedSchema": {"type": "object",
  "properties": {"note": {"type": "string"}}, "required": ["note"]}}"#;

/// A small tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).expect("mount point");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(dir)
            .status()
            .expect("mount runs");
        assert!(status.success(), "mount -t tmpfs on {}", dir.display());
        Tmpfs { dir: dir.to_owned() }
    }

    /// Fills the file system with `filler` until it refuses another byte.
    fn fill(&self) {
        let mut file = std::fs::File::create(self.filler()).expect("filler");
        let chunk = vec![0xA5u8; 4096];
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    assert_eq!(error.raw_os_error(), Some(28), "filling: {error}");
                    break;
                }
            }
        }
        // Whatever a page cache held back is refused here at the latest.
        let _ = file.sync_all();
    }

    fn free(&self) {
        std::fs::remove_file(self.filler()).expect("remove the filler");
    }

    fn filler(&self) -> PathBuf {
        self.dir.join("filler")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a daemon killed a moment ago may still hold a file.
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

async fn session(bus: &PrivateBus, server: &str) -> (zbus::Connection, Result<ClientSession, Error>) {
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some(server.into()),
        ..Origin::default()
    };
    let session = within("OpenSession to reply", ClientSession::open(&conn, &origin)).await;
    (conn, session)
}

/// The forms listed, without their ages (which change as time passes).
async fn list(broker: &Broker1Proxy<'_>) -> Vec<Value> {
    let json = within("ListForms to reply", broker.list_forms())
        .await
        .expect("ListForms works on a full disk");
    let mut forms: Vec<Value> = serde_json::from_str(&json).expect("JSON");
    for form in &mut forms {
        if let Some(form) = form.as_object_mut() {
            form.remove("age-ms");
        }
    }
    forms
}

fn state_of(forms: &[Value], id: &str) -> Option<String> {
    forms
        .iter()
        .find(|f| f["id"].as_u64().is_some_and(|n| n.to_string() == id))
        .and_then(|f| f["state"].as_str().map(str::to_owned))
}

/// The ids of the forms that wait for a human. Answered ones are left
/// out: they may come back after a restart until their lazily flushed
/// acknowledgement is durable.
fn waiting(forms: &[Value]) -> Vec<String> {
    forms
        .iter()
        .filter(|f| f["state"] != "answered")
        .map(|f| f["id"].to_string())
        .collect()
}

/// Asserts that `result` is a `Storage` error naming ENOSPC.
fn assert_no_space<T: std::fmt::Debug>(what: &str, result: Result<T, Error>) {
    match result {
        Err(Error::Storage(message)) => assert!(
            message.contains("No space left on device"),
            "{what}: the storage error does not name the cause: {message}"
        ),
        other => panic!("{what}: expected a Storage error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_state_dir_changes_nothing_and_service_resumes_once_space_is_freed() {
    if !elicit_tests::ssh::required(
        "root (to mount a tmpfs as the state directory)",
        elicit_tests::is_root(),
    ) {
        return;
    }
    let bus = PrivateBus::start();
    let disk = Tmpfs::mount(&bus.dir().join("state"), "2m");
    let mut daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let broker = frontend.broker();

    // Stored before the disk fills: one form on screen, one that expires
    // while the disk is full.
    let (_a_conn, owner) = session(&bus, "full-disk").await;
    let mut owner = owner.expect("session");
    let form = owner.submit(NOTE_FORM, None, None).await.expect("submit");
    let shown = frontend.next_show().await;
    let (_b_conn, expiring) = session(&bus, "expiring").await;
    let mut expiring = expiring.expect("session");
    let doomed = expiring.submit(NOTE_FORM, Some(3), None).await.expect("submit");
    let doomed_shown = frontend.next_show().await;

    disk.fill();

    // A submission is refused, naming the cause, and leaves no trace.
    // The log's last page may still take a few small records: those are
    // stored for real and count as accepted.
    let mut accepted = 0;
    let refused = loop {
        let before = list(&broker).await;
        match within("Elicit to reply", owner.submit(NOTE_FORM, None, None)).await {
            Ok(_) => accepted += 1,
            Err(error) => {
                assert_eq!(
                    list(&broker).await,
                    before,
                    "a refused submission changed the queue"
                );
                break Err::<(), _>(error);
            }
        }
        assert!(accepted < 100, "a full disk took 100 submissions");
    };
    assert_no_space("a submission on a full disk", refused);

    // An answer that cannot be stored is refused; the form stays on
    // screen and its owner hears nothing (checked below: the first
    // outcome it gets is the later answer's).
    let refused = within(
        "Answer to reply",
        frontend.answer(&shown, "accept", json!({"note": "lost"})),
    )
    .await;
    assert_no_space("an answer on a full disk", refused);
    assert_eq!(
        state_of(&list(&broker).await, &shown.form).as_deref(),
        Some("presented"),
        "a refused answer changed the form"
    );

    // What needs no new space keeps working; what does is refused, with
    // a reply.
    let (_c_conn, refused_session) = session(&bus, "late").await;
    assert_no_space("OpenSession on a full disk", refused_session.map(|_| ()));
    // `elicit ask` says what happened: the daemon answered, and could not
    // store the form; it is not "unreachable".
    let asked = Command::new(elicit_tests::binary("elicit"))
        .args(["--bus", bus.address(), "ask", "--message", "Deploy?"])
        .output()
        .expect("elicit ask runs");
    let said = String::from_utf8_lossy(&asked.stderr);
    assert_eq!(asked.status.code(), Some(1), "{said}");
    assert!(
        said.contains("elicitd could not store the form: ") && said.contains("No space left on device"),
        "{said}"
    );
    assert!(!said.contains("cannot reach"), "{said}");
    let status = Command::new(elicit_tests::binary("elicit"))
        .args(["--bus", bus.address(), "status"])
        .output()
        .expect("elicit status runs");
    assert!(
        status.status.success(),
        "elicit status on a full disk: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let pending = format!("pending forms: {}", 2 + accepted);
    assert!(String::from_utf8_lossy(&status.stdout).contains(&pending));

    // The deadline passes while its outcome cannot be stored: the expiry
    // is tried again, not lost.
    eventually("the deadline to fire and fail to be stored", || async {
        daemon.log().contains("could not expire a form")
    })
    .await;
    assert_eq!(
        state_of(&list(&broker).await, &doomed_shown.form).as_deref(),
        Some("presented"),
        "an expiry that was not stored changed the form"
    );

    disk.free();

    // Service resumes by itself: the expiry, the answer, a new session
    // and a submission all go through now.
    let expired = within("the expiry", expiring.wait(&doomed))
        .await
        .expect("outcome");
    assert_eq!(
        (expired.action.as_str(), expired.reason.as_str()),
        ("cancel", "timeout")
    );
    frontend
        .answer(&shown, "accept", json!({"note": "kept"}))
        .await
        .expect("an answer once space is back");
    let outcome = within("the answer", owner.wait(&form)).await.expect("outcome");
    assert_eq!(
        outcome.content,
        Some(json!({"note": "kept"})),
        "the refused answer leaked out"
    );
    let (_d_conn, again) = session(&bus, "again").await;
    again.expect("OpenSession once space is back");
    let next = owner
        .submit(NOTE_FORM, None, None)
        .await
        .expect("a submission once space is back");
    let waiting_before = waiting(&list(&broker).await);
    assert!(waiting_before.contains(&next.as_str().rsplit('/').next().unwrap_or_default().to_owned()));

    // Nothing that was refused comes back after a restart; what was
    // accepted does.
    daemon.restart().await;
    let forms = list(&Broker1Proxy::new(&bus.connect().await).await.expect("proxy")).await;
    assert_eq!(waiting(&forms), waiting_before, "after a restart: {forms:?}");

    // SIGTERM on a full disk, right after a failed write, stops it in 2 s.
    // (An answer's content needs a new file: refused for certain.)
    let late_frontend = TestFrontend::register(&bus, "late", 0).await;
    let mut late_frontend = late_frontend;
    let head = late_frontend.next_show().await;
    disk.fill();
    let refused_again = within(
        "Answer to reply",
        late_frontend.answer(&head, "accept", json!({"note": "lost too"})),
    )
    .await;
    assert_no_space("an answer on a full disk after a restart", refused_again);
    let pid = daemon.pid().expect("running");
    terminated_within(pid, Duration::from_secs(2), "elicitd on a full disk").await;
    drop(daemon);
    drop(disk);
}

/// A form of 60 fields with 3 kB of description each (about 180 kB): far
/// over sled's blob threshold, so each one is a file of its own.
fn big_form(n: usize) -> String {
    let description = "Say in a few words how the weather was on that day. ".repeat(60);
    let properties: serde_json::Map<String, Value> = (0..60)
        .map(|i| {
            (
                format!("field{i}"),
                json!({"type": "string", "description": description}),
            )
        })
        .collect();
    json!({
        "message": format!("Weather diary {n}?"),
        "requestedSchema": {"type": "object", "properties": properties},
    })
    .to_string()
}

/// Runs `elicit ARGS` against the bus and says how long it took; it must
/// succeed within `bound`.
async fn elicit_within(bus: &PrivateBus, args: &[&str], bound: Duration) -> (Duration, String) {
    let started = Instant::now();
    let output = tokio::time::timeout(
        bound,
        tokio::process::Command::new(elicit_tests::binary("elicit"))
            .args(["--bus", bus.address()])
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("elicit {args:?} did not answer within {bound:?} on a full disk"))
    .expect("elicit runs");
    assert!(
        output.status.success(),
        "elicit {args:?} on a full disk: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        started.elapsed(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Issue 27: the state directory filled by the forms' own blobs, and
/// nothing frees it. Reads answer at once, a write fails naming the cause,
/// SIGTERM works, and every acknowledged form survives a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_filled_by_the_forms_themselves_never_wedges_the_daemon() {
    if !elicit_tests::ssh::required(
        "root (to mount a tmpfs as the state directory)",
        elicit_tests::is_root(),
    ) {
        return;
    }
    let bus = PrivateBus::start();
    let disk = Tmpfs::mount(&bus.dir().join("state"), "2m");
    let mut daemon = Daemon::start(&bus, "").await;
    let (_conn, owner) = session(&bus, "diary").await;
    let owner = owner.expect("session");

    // Submit until the disk refuses: each refusal comes within 3 s and
    // names the cause.
    let mut acknowledged = Vec::new();
    let mut refusals = 0;
    for n in 0..30 {
        let started = Instant::now();
        let submitted = tokio::time::timeout(Duration::from_secs(3), owner.submit(&big_form(n), None, None))
            .await
            .unwrap_or_else(|_| panic!("submission {n} got no reply within 3 s"));
        match submitted {
            Ok(path) => acknowledged.push(path.as_str().rsplit('/').next().unwrap_or_default().to_owned()),
            Err(error) => {
                eprintln!("submission {n} refused after {:?}", started.elapsed());
                assert_no_space("a submission on a disk full of forms", Err::<(), _>(error));
                refusals += 1;
                if refusals == 2 {
                    break;
                }
            }
        }
    }
    assert!(refusals == 2, "30 forms of 180 kB fitted on a 2 MiB disk");
    assert!(!acknowledged.is_empty(), "not one form fitted");

    // Reads are served from memory at once.
    let (took, listed) = elicit_within(&bus, &["list", "--json"], Duration::from_secs(1)).await;
    eprintln!("elicit list took {took:?} on the full disk");
    for id in &acknowledged {
        assert!(
            listed.contains(&format!("\"id\":{id}")) || listed.contains(&format!("\"id\": {id}")),
            "form {id} is not listed: {listed}"
        );
    }
    let (took, status) = elicit_within(&bus, &["status"], Duration::from_secs(1)).await;
    eprintln!("elicit status took {took:?} on the full disk");
    assert!(
        status.contains(&format!("pending forms: {}", acknowledged.len())),
        "{status}"
    );

    // A new submission still gets its error within 3 s.
    let started = Instant::now();
    let late = tokio::time::timeout(Duration::from_secs(3), owner.submit(&big_form(99), None, None))
        .await
        .expect("a late submission got no reply within 3 s");
    eprintln!("the late submission was refused after {:?}", started.elapsed());
    assert_no_space("a late submission on a disk full of forms", late);

    // SIGTERM ends it within 2 s, whatever the storage thread does.
    let pid = daemon.pid().expect("running");
    let took = terminated_within(pid, Duration::from_secs(2), "elicitd on a disk full of forms").await;
    eprintln!("elicitd exited {took:?} after SIGTERM");

    // Space back (the tmpfs grows), a restart: every acknowledged form is
    // there.
    let grown = Command::new("mount")
        .args(["-o", "remount,size=32m"])
        .arg(&disk.dir)
        .status()
        .expect("mount runs");
    assert!(grown.success(), "remount the tmpfs larger");
    daemon.restart().await;
    let forms = list(&Broker1Proxy::new(&bus.connect().await).await.expect("proxy")).await;
    let back: Vec<String> = forms.iter().map(|f| f["id"].to_string()).collect();
    for id in &acknowledged {
        assert!(
            back.contains(id),
            "acknowledged form {id} is gone after the restart: {back:?}"
        );
    }
    drop(daemon);
    drop(disk);
}
