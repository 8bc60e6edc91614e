//! Harness for whole-system tests: a private `dbus-daemon` per test, the
//! real `elicitd` and `elicit` binaries, and a scripted front-end that
//! stands in for the human.
//!
//! Nothing here sleeps to synchronise: every wait is for a condition, with
//! a deadline.

pub mod agents;
mod ask;
mod bus;
mod daemon;
pub mod faults;
mod frontend;
pub mod home;
pub mod http;
mod locale;
pub mod mcp;
pub mod node;
pub mod notify;
pub mod procs;
pub mod ssh;
mod tmux;
mod xvfb;

pub use ask::{ASKER_FLAGS, ask, ask_through_socket, asker_name, printed};
pub use bus::PrivateBus;
pub use daemon::{Daemon, bus_records};
pub use frontend::{Event, Shown, TestFrontend};
pub use locale::{catalogues, language_env, language_env_words};
pub use tmux::Tmux;
pub use xvfb::Xvfb;

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

/// How long any single wait in a test may take before it fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// The path of a binary built from this workspace (`elicitd`, `elicit`, …).
///
/// `cargo test --workspace` builds every member's binaries before it runs
/// any test; they sit beside the `deps` folder this test runs from.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let mut dir = exe.parent().expect("a binary lives in a folder");
    // Tests run from target/<profile>/deps, the benchmark from the profile
    // folder itself.
    if dir.ends_with("deps") {
        dir = dir.parent().expect("deps lives in the profile folder");
    }
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test --workspace` so that it is built",
        path.display()
    );
    path
}

/// Waits for `future` up to [`DEADLINE`], failing the test with `what`.
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(DEADLINE, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {DEADLINE:?} waiting for {what}"),
    }
}

/// Polls `condition` until it holds, failing the test after [`DEADLINE`].
pub async fn eventually<F, Fut>(what: &str, condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually_within(DEADLINE, what, condition).await;
}

/// Polls `condition` until it holds, failing the test after `deadline`:
/// for a promise to the user shorter than [`DEADLINE`] (the tray's 2 s).
pub async fn eventually_within<F, Fut>(deadline: Duration, what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let waited = tokio::time::timeout(deadline, async {
        while !condition().await {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "timed out after {deadline:?} waiting for {what}");
}

/// A program on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(program))
            .find(|p| p.is_file())
    })
}

/// The daemon's `ListForms`, parsed.
pub async fn list_forms(conn: &zbus::Connection) -> Vec<serde_json::Value> {
    let broker = elicit_proto::dbus::Broker1Proxy::new(conn).await.expect("proxy");
    serde_json::from_str(&broker.list_forms().await.expect("list")).expect("JSON")
}

/// The daemon's history, newest first, parsed.
pub async fn history(conn: &zbus::Connection) -> Vec<serde_json::Value> {
    let broker = elicit_proto::dbus::Broker1Proxy::new(conn).await.expect("proxy");
    serde_json::from_str(&broker.history(10_000).await.expect("history")).expect("JSON")
}

/// True when the tests run as root (needed to act as another user).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}
