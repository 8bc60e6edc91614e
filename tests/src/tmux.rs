//! A private tmux server, to drive terminal programs as a person would.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A private tmux server running one program in an 80x24 window.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` (a shell command line) in a new 80x24 window.
    pub fn start(command: &str) -> Tmux {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "elicit-tui-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let tmux = Tmux { socket };
        let status = tmux
            .command()
            .args(["new-session", "-d", "-s", "main", "-x", "80", "-y", "24"])
            .arg(command)
            .status()
            .expect("tmux starts (install the tmux package)");
        assert!(status.success(), "tmux new-session failed");
        tmux
    }

    /// `elicit-tui` on `bus` (with `env` assignments before it and `extra`
    /// arguments after), its standard error appended to `tui.err` in the
    /// bus's folder, once the pane shows `ready`.
    pub async fn elicit_tui(bus: &crate::PrivateBus, env: &str, extra: &str, ready: &str) -> Tmux {
        let command = format!(
            "exec env {env} {} --bus '{}' {extra} 2>>'{}'",
            crate::binary("elicit-tui").display(),
            bus.address(),
            bus.dir().join("tui.err").display()
        );
        let tmux = Tmux::start(&command);
        tmux.wait_for(ready).await;
        tmux
    }

    /// A `tmux` command on this server.
    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket]);
        command
    }

    /// Sends key names (`Tab`, `Enter`, `C-d`…).
    pub fn keys(&self, keys: &[&str]) {
        let status = self
            .command()
            .args(["send-keys", "-t", "main"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        let status = self
            .command()
            .args(["send-keys", "-t", "main", "-l", text])
            .status()
            .expect("tmux send-keys -l");
        assert!(status.success());
    }

    /// The visible pane, as text.
    pub fn capture(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-t", "main"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the pane shows `needle`.
    pub async fn wait_for(&self, needle: &str) -> String {
        let what = format!("the pane to show {needle:?}");
        let mut last = String::new();
        let found = tokio::time::timeout(crate::DEADLINE, async {
            loop {
                last = self.capture();
                if last.contains(needle) {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
        .await;
        assert!(
            found.is_ok(),
            "timed out waiting for {what}; the pane shows:\n{last}"
        );
        last
    }

    /// The pid of the program in the pane (the `exec`ed one).
    pub fn pane_pid(&self) -> u32 {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", "main", "#{pane_pid}"])
            .output()
            .expect("tmux display-message");
        let text = String::from_utf8_lossy(&output.stdout);
        text.trim()
            .parse()
            .unwrap_or_else(|e| panic!("tmux gave no pane pid ({e}): {text:?}"))
    }

    /// Resizes the window.
    pub fn resize(&self, width: u16, height: u16) {
        let status = self
            .command()
            .args([
                "resize-window",
                "-t",
                "main",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .status()
            .expect("tmux resize-window");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}
