//! Issue 39 item 5: a front-end stopped with SIGSTOP (Ctrl-Z) past
//! `show-timeout-ms` is set aside, not forgotten. Its form goes to another
//! front-end; after SIGCONT it does not show that form stale (the `Show`
//! it reads late is refused), it is counted again, and later forms reach
//! it. `elicit-tui` in tmux; the other front-end is the test's own.

use std::time::{Duration, Instant};

use elicit_tests::procs::{children_of, kill};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, Tmux, ask, binary, eventually, printed};
use serde_json::json;

/// Short, so that the test does not wait out the 5 s default.
const SHOW_TIMEOUT_MS: u64 = 800;

const SCHEMA: &str = r#"{"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}}"#;

/// `elicit-tui` on `bus` as a job of the pane's shell, as a person runs
/// it, once registered; with its pid. (tmux continues its own child at
/// once when it stops, so the TUI must not be the pane's process.)
async fn tui_in_a_shell(bus: &PrivateBus) -> (Tmux, u32) {
    let command = format!(
        "env NO_COLOR=1 {} --bus '{}' 2>>'{}'; exit",
        binary("elicit-tui").display(),
        bus.address(),
        bus.dir().join("tui.err").display()
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for("Registered with elicitd").await;
    let shell = tmux.pane_pid();
    let tui = children_of(shell);
    assert_eq!(tui.len(), 1, "the shell runs the TUI as its one job: {tui:?}");
    (tmux, tui[0])
}

async fn frontends(frontend: &TestFrontend) -> u32 {
    frontend.broker().frontends().await.expect("Frontends")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_tui_loses_its_form_shows_nothing_stale_and_comes_back() {
    let bus = PrivateBus::start();
    let config = format!("[broker]\nshow-timeout-ms = {SHOW_TIMEOUT_MS}\n");
    let _daemon = Daemon::start(&bus, &config).await;
    let (tmux, tui) = tui_in_a_shell(&bus).await;
    // Ranked after the TUI (priority 10): it gets a form only when the TUI
    // does not.
    let mut other = TestFrontend::register(&bus, "script", 0).await;
    assert_eq!(frontends(&other).await, 2);

    kill("-STOP", tui);
    let stopped = Instant::now();
    let asked = ask(&bus, "Asked while the TUI sleeps", SCHEMA, &[]);
    let shown = other.next_show().await;
    let moved = stopped.elapsed();
    eprintln!(
        "the form went elsewhere {} ms after it was asked",
        moved.as_millis()
    );
    assert_eq!(shown.request["message"], "Asked while the TUI sleeps");
    assert!(moved >= Duration::from_millis(SHOW_TIMEOUT_MS), "{moved:?}");
    assert_eq!(frontends(&other).await, 1, "the stopped TUI is set aside");

    kill("-CONT", tui);
    let resumed = Instant::now();
    eventually("the TUI to count again", || async {
        frontends(&other).await == 2
    })
    .await;
    let back = resumed.elapsed();
    eprintln!("the TUI was counted again {} ms after SIGCONT", back.as_millis());
    // It came back by replying to the Withdraw queued behind the stale
    // Show: both were read, and the form is not on its screen.
    let pane = tmux.capture();
    assert!(
        !pane.contains("Asked while the TUI sleeps"),
        "shown stale:\n{pane}"
    );
    other
        .answer(&shown, "accept", json!({"name": "Ada"}))
        .await
        .expect("the other front-end answers");
    let (answer, _) = printed(asked).await;
    assert_eq!(answer["action"], "accept");

    // Later forms reach it again: the other front-end leaves first.
    drop(other);
    let asked = ask(&bus, "Asked once it is back", SCHEMA, &[]);
    tmux.wait_for("Asked once it is back").await;
    let pane = tmux.capture();
    assert!(!pane.contains("Asked while the TUI sleeps"), "{pane}");
    tmux.keys(&["Escape"]);
    let (answer, _) = printed(asked).await;
    assert_eq!(answer["action"], "cancel");
}
