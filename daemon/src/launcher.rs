//! Starting the configured front-end program when a form has no one to
//! show it.

use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// Starts `frontends.command` at most once at a time.
#[derive(Debug)]
pub struct Launcher {
    command: Vec<String>,
    child: Mutex<Option<Child>>,
}

impl Launcher {
    /// A launcher for `command` (argv); empty means never start anything.
    pub fn new(command: Vec<String>) -> Self {
        Launcher {
            command,
            child: Mutex::new(None),
        }
    }

    /// Starts the program unless it is already running.
    pub fn ensure_running(&self) {
        let Some((program, args)) = self.command.split_first() else {
            return;
        };
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        // try_wait also reaps a program that has exited.
        if let Some(running) = child.as_mut()
            && matches!(running.try_wait(), Ok(None))
        {
            return;
        }
        match Command::new(program).args(args).stdin(Stdio::null()).spawn() {
            Ok(started) => {
                tracing::info!(%program, pid = started.id(), "started the front-end program");
                *child = Some(started);
            }
            Err(error) => {
                tracing::error!(%program, %error, "could not start the front-end program");
                *child = None;
            }
        }
    }
}
