//! Power-cut durability: every write the broker acknowledges is on stable
//! storage before the acknowledgement leaves.
//!
//! `kill -9` tests (the fault suite) cannot tell a write in the kernel's page
//! cache from one on the disk. This test watches the real daemon's system
//! calls with `strace` while `elicit ask` submits forms that a front-end
//! answers, and checks the order for each acknowledgement: every write to
//! sled's log that precedes the `Elicit` reply (a stored submission) or the
//! `Response` signal (a stored answer) is followed by an `fdatasync`/`fsync`
//! of that file, which starts after the write and ends before the message is
//! sent. The same run with `sync = "process-crash"` must break that order,
//! which shows the check can fail.
//!
//! A real power cut (dm-flakey or dm-log-writes on a loop device) needs the
//! kernel's device-mapper, which this machine's kernel does not offer.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use elicit_tests::{Daemon, PrivateBus, TestFrontend, ask, printed, within};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const FORMS: usize = 3;
const SCHEMA: &str = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;

/// `strace`, or a loud skip (a failure under `CI`).
fn strace() -> Option<PathBuf> {
    let found = elicit_tests::which("strace");
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "strace is missing: install it (Debian package strace) to run the durability test"
        );
        eprintln!("SKIPPED: strace is missing (install the Debian package strace)");
    }
    found
}

/// One system call of interest, as strace reported it.
#[derive(Debug)]
struct Call {
    name: String,
    /// The path or socket strace printed for the first argument (`-yy`).
    target: String,
    /// The rest of the arguments, for the message contents.
    args: String,
    /// The log lines (in order) where it started and where it returned.
    started: usize,
    returned: usize,
}

/// Reads `strace -f -yy` output, joining `<unfinished ...>` with its
/// `<... resumed>` line.
fn calls(log: &str) -> Vec<Call> {
    let mut open: std::collections::HashMap<String, Call> = Default::default();
    let mut done = Vec::new();
    for (index, line) in log.lines().enumerate() {
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(resumed) = rest.strip_prefix("<... ") {
            if let Some(mut call) = open.remove(pid) {
                call.returned = index;
                call.args.push_str(resumed);
                done.push(call);
            }
            continue;
        }
        let Some((name, args)) = rest.split_once('(') else {
            continue;
        };
        let target = args
            .split_once('<')
            .and_then(|(_, after)| after.split_once('>'))
            .map(|(target, _)| target.to_owned())
            .unwrap_or_default();
        let call = Call {
            name: name.to_owned(),
            target,
            args: args.to_owned(),
            started: index,
            returned: index,
        };
        if rest.ends_with("<unfinished ...>") {
            open.insert(pid.to_owned(), call);
        } else {
            done.push(call);
        }
    }
    done.sort_by_key(|call| call.started);
    done
}

/// The message of form `n`: what finds its record in a write to the log.
fn message(n: usize) -> String {
    format!("Durable {n}?")
}

/// What the trace showed.
#[derive(Debug, Default)]
struct Verdict {
    /// `Elicit` replies and `Response` signals seen.
    acknowledgements: usize,
    /// Those that left while a write to the log was not yet synced.
    unsynced: Vec<String>,
    /// fdatasync/fsync calls on the log.
    syncs: usize,
}

fn judge(log: &str, sled_log: &Path, request_paths: &[String]) -> Verdict {
    let sled_log = sled_log.to_string_lossy();
    let calls = calls(log);
    let writes =
        |c: &&Call| c.target == sled_log && (c.name.starts_with("pwrite") || c.name.starts_with("write"));
    let syncs = |c: &&Call| c.target == sled_log && (c.name == "fdatasync" || c.name == "fsync");
    let mut verdict = Verdict {
        syncs: calls.iter().filter(syncs).count(),
        ..Verdict::default()
    };
    for send in calls
        .iter()
        .filter(|c| c.name == "sendmsg" || c.name.starts_with("write"))
    {
        if !send.target.starts_with("UNIX") {
            continue;
        }
        // D-Bus messages start with the byte order 'l' and the type:
        // 2 a method return, 4 a signal.
        let body = &send.args;
        let reply =
            body.contains(r#"iov_base="l\2"#) && request_paths.iter().any(|p| body.contains(p.as_str()));
        let response = body.contains(r#"iov_base="l\4"#) && body.contains("Response");
        // Which form it acknowledges: both carry the form's object path.
        let form = request_paths.iter().position(|p| body.contains(p.as_str()));
        let (true, Some(form)) = (reply || response, form) else {
            continue;
        };
        verdict.acknowledgements += 1;
        // The last write to the log that carried this form's record (its
        // message is unique to it) must be synced before the send. Other
        // writes (a delayed flush of something else) may come and go.
        let message = message(form);
        let last_write = calls
            .iter()
            .filter(writes)
            .filter(|w| w.returned < send.started && w.args.contains(&message))
            .map(|w| w.returned)
            .max();
        let Some(last_write) = last_write else {
            verdict.unsynced.push(format!(
                "no write of {message:?} before its acknowledgement at line {}",
                send.started + 1
            ));
            continue;
        };
        let covered = calls
            .iter()
            .filter(syncs)
            .any(|s| s.started > last_write && s.returned < send.started);
        if !covered {
            let what = if reply { "an Elicit reply" } else { "a Response" };
            let from = last_write.saturating_sub(6);
            let window: Vec<&str> = log
                .lines()
                .skip(from)
                .take(send.started + 2 - from)
                .map(|l| l.get(..200).unwrap_or(l))
                .collect();
            verdict.unsynced.push(format!(
                "{what} at trace line {} (last write at line {}):\n{}",
                send.started + 1,
                last_write + 1,
                window.join("\n")
            ));
        }
    }
    verdict
}

/// Runs [`FORMS`] forms through a daemon with `sync` under strace and
/// judges the trace.
async fn traced(strace: &Path, sync: &str) -> Verdict {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, &format!("[store]\nsync = \"{sync}\"\n")).await;
    let mut frontend = TestFrontend::register(&bus, "scripted", 0).await;
    let trace = bus.dir().join("strace.log");
    let mut tracer = tokio::process::Command::new(strace)
        .args(["-f", "-yy", "-s", "65536", "-e"])
        .arg("trace=pwrite64,pwritev,pwritev2,write,writev,sendmsg,fdatasync,fsync")
        .arg("-o")
        .arg(&trace)
        .arg("-p")
        .arg(daemon.pid().expect("elicitd runs").to_string())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("strace starts");
    let mut stderr = BufReader::new(tracer.stderr.take().expect("stderr piped")).lines();
    within("strace to attach to elicitd", async {
        while let Ok(Some(line)) = stderr.next_line().await {
            if line.contains("attached") {
                return;
            }
        }
        panic!("strace ended without attaching (is ptrace allowed here?)");
    })
    .await;

    let mut request_paths = Vec::new();
    for n in 0..FORMS {
        let child = ask(&bus, &message(n), SCHEMA, &[]);
        let shown = frontend.next_show().await;
        request_paths.push(elicit_proto::dbus::form_path(&shown.session, &shown.form));
        frontend
            .answer(&shown, "accept", json!({ "n": n }))
            .await
            .expect("answer");
        let (printed, code) = printed(child).await;
        assert_eq!(
            (printed["content"]["n"].as_u64(), code),
            (Some(n as u64), Some(0))
        );
    }

    // SIGTERM detaches strace from the daemon and ends it.
    let pid = tracer.id().expect("strace runs");
    let _ = std::process::Command::new("kill").arg(pid.to_string()).status();
    within("strace to end", tracer.wait()).await.expect("strace ends");
    let log = std::fs::read_to_string(&trace).expect("strace log");
    judge(&log, &daemon.state_dir().join("db"), &request_paths)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_acknowledged_write_is_synced_before_the_acknowledgement() {
    let Some(strace) = strace() else { return };

    let full = traced(&strace, "full").await;
    eprintln!("sync = full: {full:?}");
    // Every submission's reply and every answer's Response was seen, so
    // the order below was checked for each of them.
    assert_eq!(full.acknowledgements, 2 * FORMS, "{full:?}");
    assert!(
        full.unsynced.is_empty(),
        "left before their write was synced: {:?}",
        full.unsynced
    );
    assert!(full.syncs >= 2 * FORMS, "{full:?}");

    // Without the sync, the same check fails: it can tell the difference.
    let crash_only = traced(&strace, "process-crash").await;
    eprintln!("sync = process-crash: {crash_only:?}");
    assert_eq!(crash_only.acknowledgements, 2 * FORMS, "{crash_only:?}");
    assert_eq!(crash_only.syncs, 0, "{crash_only:?}");
    assert_eq!(crash_only.unsynced.len(), 2 * FORMS, "{crash_only:?}");
}
