//! A private X server (Xvfb) for one test: the GTK window and the
//! notification server draw there, never on the user's display.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// An Xvfb server that lives as long as this value.
pub struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb on a free display number. Xvfb picks the number itself
    /// and writes it to `-displayfd` once it accepts connections: that line
    /// is the readiness signal.
    pub fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts (install the xvfb package)");
        let stdout = child.stdout.take().expect("stdout");
        let mut number = String::new();
        BufReader::new(stdout)
            .read_line(&mut number)
            .expect("display number");
        let number = number.trim();
        assert!(!number.is_empty(), "Xvfb exited before it chose a display");
        Xvfb {
            child,
            display: format!(":{number}"),
        }
    }

    /// The `DISPLAY` value for programs that should draw here.
    pub fn display(&self) -> &str {
        &self.display
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
