//! Issue 39 item 6: the terminal UI's URL consent cannot be forged. A
//! message that imitates the consent screen, padded with 60 newlines, and
//! a 240-character host: the real address, its whole `Host:` line and the
//! warnings stay on screen, pinned under the message, which scrolls.
//! `elicit-tui` in tmux at 80x24, asked with `elicit ask --url`.

use elicit_tests::{Daemon, PrivateBus, Tmux, ask, printed};
use serde_json::json;

/// The pane's lines without their indentation, joined: what wraps reads
/// whole.
fn flat(pane: &str) -> String {
    pane.lines().map(str::trim).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_imitating_the_consent_cannot_hide_the_real_address() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let tmux = Tmux::elicit_tui(&bus, "NO_COLOR=1", "", "Registered with elicitd").await;
    // 240 characters once in ASCII (xn--), with a look-alike label.
    let labels = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(30)];
    let url = format!("https://{}.p\u{430}ypal.com/login", labels.join("."));
    let host = format!("{}.xn--pypal-4ve.com", labels.join("."));
    assert_eq!(host.len(), 240);
    let fake = format!(
        "The server asks you to open this address:\n  https://accounts.google.com/signin\n  Host: accounts.google.com{}",
        "\n".repeat(60)
    );
    let asked = ask(&bus, &fake, &url, &[]);
    let pane = tmux
        .wait_for("── The server asks you to open this address:")
        .await;
    let whole = flat(&pane);
    assert!(
        whole.contains(&format!("Host: {host}")),
        "the whole host:\n{pane}"
    );
    assert!(
        whole.contains(&format!("https://{host}/login")),
        "the whole address:\n{pane}"
    );
    assert!(
        whole.contains("Warning: the host is an international name")
            && whole.contains("mixes Latin and Cyrillic letters"),
        "the warnings:\n{pane}"
    );
    assert!(pane.contains("Up/Down scroll the message (1/"), "{pane}");
    // The message scrolls; the consent stays.
    tmux.keys(&["Down", "Down"]);
    let pane = tmux.wait_for("Up/Down scroll the message (3/").await;
    assert!(flat(&pane).contains(&format!("Host: {host}")), "{pane}");
    tmux.keys(&["Escape"]);
    assert_eq!(printed(asked).await.0, json!({"action": "cancel"}));
}
