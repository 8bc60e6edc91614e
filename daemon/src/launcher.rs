//! Starting a front-end program when a form has no one to show it.
//!
//! The programs come from `[frontends]` (see [`FrontendConfig`]): the first
//! one, in preference order, whose condition holds and whose front-end is
//! not registered already (nor passed this very form on) is started, once:
//! while it runs, it is not started again.

use std::collections::{HashMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use crate::config::{FrontendConfig, Program};

/// Starts the configured front-end programs, each at most once at a time.
#[derive(Debug)]
pub struct Launcher {
    programs: Vec<Program>,
    /// Started programs by their place in `programs`.
    children: Mutex<HashMap<usize, Child>>,
}

impl Launcher {
    /// A launcher for the programs of `config`; none means never start
    /// anything.
    pub fn new(config: &FrontendConfig) -> Self {
        Launcher {
            programs: config.programs_in_order(),
            children: Mutex::new(HashMap::new()),
        }
    }

    /// Makes sure a program is on its way for a form nobody can show:
    /// starts the first program whose condition holds in the daemon's
    /// environment and whose name is not in `unwanted` (front-ends that are
    /// registered already, or that passed the form on), unless that
    /// program runs already. A program that cannot be started is skipped
    /// for the next one.
    pub fn ensure_running(&self, unwanted: &HashSet<String>) {
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        for (index, program) in self.programs.iter().enumerate() {
            if !program.name.is_empty() && unwanted.contains(&program.name) {
                continue;
            }
            // Read at every launch: a daemon started before the graphical
            // session learns its display only through its environment.
            if !program.when.holds(|name| std::env::var(name).ok()) {
                continue;
            }
            // try_wait also reaps a program that has exited.
            if let Some(running) = children.get_mut(&index)
                && matches!(running.try_wait(), Ok(None))
            {
                return;
            }
            let Some((command, args)) = program.command.split_first() else {
                continue;
            };
            match Command::new(command).args(args).stdin(Stdio::null()).spawn() {
                Ok(started) => {
                    tracing::info!(frontend = %program.name, %command, pid = started.id(), "started a front-end program");
                    children.insert(index, started);
                    return;
                }
                Err(error) => {
                    tracing::error!(frontend = %program.name, %command, %error, "could not start a front-end program");
                    children.remove(&index);
                }
            }
        }
    }
}
