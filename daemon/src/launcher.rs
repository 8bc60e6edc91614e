//! Starting a front-end program when a form has no one to show it.
//!
//! The programs come from `[frontends]` (see [`FrontendConfig`]): the first
//! one, in preference order, whose condition holds and whose front-end is
//! not registered already (nor passed this very form on) is started, once:
//! while it runs, it is not started again.
//!
//! A daemon that starts again (after an idle exit, say) while front-ends
//! it served are still open first gives them a moment to register again:
//! otherwise the form that activated it would start a second GTK window
//! beside the one still on screen.
//!
//! Which programs apply is the pure rule of [`crate::config::eligible`];
//! this reads its facts from the machine: the daemon's environment (read
//! at every launch: a daemon started before the graphical session learns
//! its display only through its environment) and `PATH`. Whether a
//! notification server runs is the driver's to ask, on the bus.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::config::{Facts, FrontendConfig, Program, eligible, needs_notifications};

/// Starts the configured front-end programs, each at most once at a time.
#[derive(Debug)]
pub struct Launcher {
    programs: Vec<Program>,
    /// The bus the daemon serves on, where it is not the session bus of
    /// its environment: the programs it starts must find this broker.
    bus: Option<String>,
    /// Started programs by their place in `programs`.
    children: Mutex<HashMap<usize, Child>>,
    grace: Mutex<Grace>,
}

/// The wait at start for front-ends that are still open.
#[derive(Debug, Default)]
struct Grace {
    /// When the wait ends at the latest.
    until: Option<Instant>,
    /// The unique bus names of the front-ends waited for.
    returning: HashSet<String>,
    /// A program was wanted meanwhile.
    deferred: bool,
}

impl Grace {
    fn holds(&self) -> bool {
        !self.returning.is_empty() && self.until.is_some_and(|until| Instant::now() < until)
    }
}

impl Launcher {
    /// A launcher for the programs of `config`; none means never start
    /// anything. `bus` is the daemon's `--bus`, passed on to the programs
    /// as their session bus.
    pub fn new(config: &FrontendConfig, bus: Option<String>) -> Self {
        Launcher {
            programs: config.programs_in_order(),
            bus,
            children: Mutex::new(HashMap::new()),
            grace: Mutex::new(Grace::default()),
        }
    }

    fn grace(&self) -> std::sync::MutexGuard<'_, Grace> {
        self.grace.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// At start: the front-ends `returning` (unique bus names) were
    /// registered before and are still on the bus, so no program starts
    /// until they have registered again or `patience` has passed. Returns
    /// when the wait ends, if there is one: only with programs configured
    /// and front-ends to wait for.
    pub fn await_returning(&self, returning: HashSet<String>, patience: Duration) -> Option<Instant> {
        if self.programs.is_empty() || returning.is_empty() {
            return None;
        }
        let until = Instant::now() + patience;
        *self.grace() = Grace {
            until: Some(until),
            returning,
            deferred: false,
        };
        Some(until)
    }

    /// `bus_name` registered: one fewer front-end to wait for.
    pub fn registered(&self, bus_name: &str) {
        self.grace().returning.remove(bus_name);
    }

    /// Ends the wait; true when a program was wanted during it, so that
    /// the caller dispatches again.
    pub fn end_grace(&self) -> bool {
        std::mem::take(&mut *self.grace()).deferred
    }

    /// Whether choosing a program for a form that no front-end named in
    /// `unwanted` may show needs to know if a notification server with
    /// actions runs (see [`crate::config::needs_notifications`]).
    pub fn needs_notifications(&self, unwanted: &HashSet<String>) -> bool {
        let var = |name: &str| std::env::var(name).ok();
        let facts = Facts {
            var: &var,
            installed: &installed,
            notifications: false,
        };
        needs_notifications(&self.programs, unwanted, &facts)
    }

    /// Makes sure a program is on its way for a form nobody can show:
    /// starts the first program that applies (see
    /// [`crate::config::eligible`]; `notifications` says whether a
    /// notification server with actions runs) and whose name is not in
    /// `unwanted` (front-ends that are registered already, or that passed
    /// the form on), unless that program runs already. A program that
    /// cannot be started is skipped for the next one.
    ///
    /// Returns whether someone may yet show the form: a program runs or
    /// was started, or front-ends that were open are expected back. False
    /// means the form waits unseen until a front-end is started by hand.
    pub fn ensure_running(&self, unwanted: &HashSet<String>, notifications: bool) -> bool {
        {
            let mut grace = self.grace();
            if grace.holds() {
                grace.deferred = true;
                return true;
            }
        }
        let var = |name: &str| std::env::var(name).ok();
        let facts = Facts {
            var: &var,
            installed: &installed,
            notifications,
        };
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        for index in eligible(&self.programs, unwanted, &facts) {
            let program = &self.programs[index];
            // try_wait also reaps a program that has exited.
            if let Some(running) = children.get_mut(&index)
                && matches!(running.try_wait(), Ok(None))
            {
                return true;
            }
            let Some((command, args)) = program.command.split_first() else {
                continue;
            };
            let mut child = Command::new(command);
            child.args(args).stdin(Stdio::null());
            if let Some(bus) = &self.bus {
                child.env("DBUS_SESSION_BUS_ADDRESS", bus);
            }
            match child.spawn() {
                Ok(started) => {
                    tracing::info!(frontend = %program.name, %command, pid = started.id(), "started a front-end program");
                    children.insert(index, started);
                    return true;
                }
                Err(error) => {
                    tracing::error!(frontend = %program.name, %command, %error, "could not start a front-end program");
                    children.remove(&index);
                }
            }
        }
        tracing::info!(
            notifications,
            "no front-end program applies: the form waits for one started by hand"
        );
        false
    }
}

impl Launcher {
    /// Why [`Launcher::ensure_running`] started nothing, in a phrase for
    /// the user of the agent whose form waits.
    pub fn why_none(&self, notifications: bool) -> String {
        let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.is_empty());
        if self.programs.is_empty() {
            "elicitd is configured to start no front-end".to_owned()
        } else if !set("DISPLAY") && !set("WAYLAND_DISPLAY") {
            "elicitd has no display: neither DISPLAY nor WAYLAND_DISPLAY is set".to_owned()
        } else if !notifications
            && !self
                .programs
                .iter()
                .any(|p| p.command.first().is_some_and(|w| installed(w)))
        {
            "no front-end program is installed (elicit-gtk, elicit-notify)".to_owned()
        } else {
            "no front-end program could be started".to_owned()
        }
    }
}

/// Whether `word`, a command's first word, names a program that can be
/// started: an executable file where it holds a `/`, else one in a folder
/// of `PATH`, as `execvp` looks for it.
fn installed(word: &str) -> bool {
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if word.contains('/') {
        return executable(Path::new(word));
    }
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .filter(|dir| !dir.as_os_str().is_empty())
            .any(|dir| executable(&dir.join(word)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FrontendConfig;

    fn launcher() -> Launcher {
        let config: FrontendConfig =
            toml::from_str("[[program]]\nname = \"gtk\"\ncommand = [\"true\"]\n").expect("config");
        Launcher::new(&config, None)
    }

    fn started(launcher: &Launcher) -> usize {
        launcher.children.lock().map(|c| c.len()).unwrap_or_default()
    }

    #[test]
    fn no_program_starts_while_a_returning_front_end_may_register() {
        let launcher = launcher();
        let returning = HashSet::from([":1.7".to_owned(), ":1.8".to_owned()]);
        assert!(
            launcher
                .await_returning(returning, Duration::from_secs(60))
                .is_some()
        );
        launcher.ensure_running(&HashSet::new(), false);
        launcher.registered(":1.7");
        launcher.ensure_running(&HashSet::new(), false);
        assert_eq!(started(&launcher), 0, "one of them is still on its way");
        // The last one registered: programs start again as needed.
        launcher.registered(":1.8");
        launcher.ensure_running(&HashSet::new(), false);
        assert_eq!(started(&launcher), 1);
        assert!(launcher.end_grace(), "what was put off is reported all the same");
    }

    #[test]
    fn the_wait_ends_by_itself_and_says_a_program_was_put_off() {
        let returning = HashSet::from([":1.7".to_owned()]);
        let over = launcher();
        assert!(over.await_returning(returning.clone(), Duration::ZERO).is_some());
        over.ensure_running(&HashSet::new(), false);
        assert_eq!(started(&over), 1, "a wait that is over holds nothing");

        let waiting = launcher();
        let patience = Duration::from_secs(60);
        assert!(waiting.await_returning(returning, patience).is_some());
        waiting.ensure_running(&HashSet::new(), false);
        assert!(waiting.end_grace(), "the start put off is reported");
        waiting.ensure_running(&HashSet::new(), false);
        assert_eq!(started(&waiting), 1);
    }

    #[test]
    fn nothing_is_waited_for_without_programs_or_returning_front_ends() {
        let none = Launcher::new(&toml::from_str("program = []").expect("config"), None);
        assert!(
            none.await_returning(HashSet::from([":1.7".to_owned()]), Duration::from_secs(60))
                .is_none()
        );
        assert!(
            launcher()
                .await_returning(HashSet::new(), Duration::from_secs(60))
                .is_none()
        );
    }
}
