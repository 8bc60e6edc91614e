//! `elicit demo` as a newcomer runs it: in a terminal with no session bus,
//! it starts everything, shows example forms, and cleans up on quit.

use elicit_tests::{Tmux, binary};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_starts_everything_shows_forms_and_cleans_up() {
    let marker = tempfile::tempdir().expect("temp dir");
    let done = marker.path().join("done");
    // The demo's scratch folder goes under its own TMPDIR, to be checked.
    let scratch = marker.path().join("tmp");
    std::fs::create_dir(&scratch).expect("scratch");
    let tmux = Tmux::start(&format!(
        "env -u DBUS_SESSION_BUS_ADDRESS TMPDIR='{}' {} demo; echo \"exit=$?\" > '{}'; echo DEMO-ENDED; sleep 60",
        scratch.display(),
        binary("elicit").display(),
        done.display()
    ));
    // Both example sessions queue up, and the first question is on screen.
    let pane = tmux.wait_for("Waiting: 2 forms").await;
    assert!(
        pane.contains("demo-deployer") && pane.contains("demo-contacts"),
        "{pane}"
    );
    // The two sessions' first forms reach the terminal UI in either order
    // (each is shown by a call of its own); the deployer's is the one
    // this test answers.
    if !pane.contains("Delete all 47 contacts?") {
        tmux.keys(&["NPage"]);
    }
    let pane = tmux.wait_for("Delete all 47 contacts?").await;
    assert!(pane.contains("Enter accept"), "{pane}");
    // Answering brings the session's next form: the URL consent.
    tmux.keys(&["Enter"]);
    tmux.keys(&["C-n"]);
    tmux.wait_for("example.com").await;
    tmux.keys(&["C-c"]);
    let pane = tmux.wait_for("DEMO-ENDED").await;
    assert!(pane.contains("everything it started is stopped"), "{pane}");
    let status = std::fs::read_to_string(&done).expect("exit status written");
    assert_eq!(status.trim(), "exit=0");
    // Nothing it started survives it: not its bus, its daemon, or its
    // scratch folder.
    let leftover = std::process::Command::new("pgrep")
        .arg("-f")
        .arg(scratch.join("elicit-demo-"))
        .output()
        .expect("pgrep");
    assert!(
        leftover.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&leftover.stdout)
    );
    let left: Vec<_> = std::fs::read_dir(&scratch).expect("scratch").collect();
    assert!(left.is_empty(), "left behind in {}: {left:?}", scratch.display());
}
