//! Reloading the rules when a rules directory changes, without a restart.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use elicit_proto::Limits;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use crate::budget::Budget;
use crate::error::PolicyError;
use crate::guard::SecretGuard;
use crate::policy::Policy;

/// Editors and package managers write a file in several steps; the reload
/// waits until the directory has been quiet this long.
const QUIET: Duration = Duration::from_millis(100);

enum Message {
    Changed(notify::Result<notify::Event>),
    Stop,
}

/// Keeps a [`Policy`] current: watches the rules directories and reloads
/// on every change. A directory that does not exist yet is watched through
/// its nearest existing ancestor, so creating it later is noticed too.
///
/// Readers take the policy in force with [`PolicyWatcher::current`] (or
/// share [`PolicyWatcher::shared`]); a decision under way keeps the policy
/// it started with.
pub struct PolicyWatcher {
    current: Arc<ArcSwap<Policy>>,
    sender: Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

impl PolicyWatcher {
    /// Loads the rules of `dirs` and starts watching them.
    pub fn start(dirs: Vec<PathBuf>) -> Result<Self, PolicyError> {
        Self::start_with(dirs, Budget::default(), Limits::default())
    }

    /// As [`PolicyWatcher::start`], with explicit limits.
    pub fn start_with(dirs: Vec<PathBuf>, budget: Budget, limits: Limits) -> Result<Self, PolicyError> {
        Self::start_guarded(dirs, budget, limits, SecretGuard::On)
    }

    /// As [`PolicyWatcher::start_with`], with the built-in secret guard on
    /// or off in every policy it loads.
    pub fn start_guarded(
        dirs: Vec<PathBuf>,
        budget: Budget,
        limits: Limits,
        secret_guard: SecretGuard,
    ) -> Result<Self, PolicyError> {
        let (sender, receiver) = mpsc::channel();
        let events = sender.clone();
        let mut watcher = notify::recommended_watcher(move |event| {
            // The receiver is gone only when the watcher is shutting down.
            let _ = events.send(Message::Changed(event));
        })
        .map_err(|source| PolicyError::Watch {
            path: PathBuf::new(),
            source,
        })?;
        // Watch before loading, so that no change falls between the two.
        let mut watched = BTreeSet::new();
        rewatch(&mut watcher, &dirs, &mut watched)?;
        let policy =
            Policy::load_with(&dirs, budget.clone(), limits.clone())?.with_secret_guard(secret_guard);
        let current = Arc::new(ArcSwap::from_pointee(policy));
        let reloader = Reloader {
            dirs,
            budget,
            limits,
            secret_guard,
            current: current.clone(),
            watcher,
            watched,
        };
        let thread = std::thread::Builder::new()
            .name("elicitd-policy-watch".into())
            .spawn(move || reloader.run(receiver))
            .map_err(|source| PolicyError::Watch {
                path: PathBuf::new(),
                source: notify::Error::io(source),
            })?;
        Ok(PolicyWatcher {
            current,
            sender,
            thread: Some(thread),
        })
    }

    /// The policy in force now.
    pub fn current(&self) -> Arc<Policy> {
        self.current.load_full()
    }

    /// The swappable policy itself, for holders that outlive a borrow.
    pub fn shared(&self) -> Arc<ArcSwap<Policy>> {
        self.current.clone()
    }
}

impl Drop for PolicyWatcher {
    fn drop(&mut self) {
        let _ = self.sender.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The watching thread's state.
struct Reloader {
    dirs: Vec<PathBuf>,
    budget: Budget,
    limits: Limits,
    secret_guard: SecretGuard,
    current: Arc<ArcSwap<Policy>>,
    watcher: RecommendedWatcher,
    watched: BTreeSet<PathBuf>,
}

impl Reloader {
    fn run(mut self, receiver: Receiver<Message>) {
        while let Ok(Message::Changed(event)) = receiver.recv() {
            if !self.relevant(&event) {
                continue;
            }
            loop {
                match receiver.recv_timeout(QUIET) {
                    Ok(Message::Changed(_)) => continue,
                    Err(RecvTimeoutError::Timeout) => break,
                    Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            if let Err(error) = rewatch(&mut self.watcher, &self.dirs, &mut self.watched) {
                tracing::error!(%error, "cannot watch the rules directories");
            }
            match Policy::load_with(&self.dirs, self.budget.clone(), self.limits.clone()) {
                Ok(policy) => {
                    let policy = policy.with_secret_guard(self.secret_guard);
                    tracing::info!(problems = policy.problems().len(), "rules reloaded");
                    self.current.store(Arc::new(policy));
                }
                Err(error) => tracing::error!(%error, "rules not reloaded; the previous ones stay"),
            }
        }
    }

    /// Whether an event touches a rules directory, its contents, or an
    /// ancestor that may be becoming one. Errors count: better a needless
    /// reload than a missed one.
    fn relevant(&self, event: &notify::Result<notify::Event>) -> bool {
        let Ok(event) = event else {
            return true;
        };
        if event.kind.is_access() {
            return false;
        }
        event.paths.iter().any(|path| {
            self.dirs
                .iter()
                .any(|dir| path.starts_with(dir) || dir.starts_with(path))
        })
    }
}

/// Makes the watched set exactly the nearest existing ancestor-or-self of
/// each directory.
fn rewatch(
    watcher: &mut RecommendedWatcher,
    dirs: &[PathBuf],
    watched: &mut BTreeSet<PathBuf>,
) -> Result<(), PolicyError> {
    let wanted: BTreeSet<PathBuf> = dirs.iter().filter_map(|dir| nearest_existing(dir)).collect();
    for stale in watched.difference(&wanted) {
        // It may be gone already, and with it the watch.
        let _ = watcher.unwatch(stale);
    }
    let mut result = Ok(());
    for path in wanted.difference(watched) {
        if let Err(source) = watcher.watch(path, RecursiveMode::NonRecursive) {
            result = Err(PolicyError::Watch {
                path: path.clone(),
                source,
            });
        }
    }
    *watched = wanted;
    result
}

fn nearest_existing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|path| path.is_dir()).map(Path::to_path_buf)
}
