//! The policy seam: the user's rules (`elicitd-policy`) and remembered
//! choices decide a form before any human sees it.

use std::path::PathBuf;
use std::time::Duration;

use elicit_proto::dbus::Origin;
use elicit_proto::{Answer, Elicitation, ElicitationAction, Error, Limits};
use elicitd_policy::{Budget, Decision, Policy, PolicyWatcher, RememberedChoice, SecretGuard, Verdict};

use crate::store::Store;

/// A decision that spares the human.
#[derive(Debug, Clone)]
pub struct PolicyVerdict {
    /// The outcome to deliver.
    pub answer: Answer,
    /// Why, as history records it.
    pub reason: String,
    /// Which rule decided (`FILE: RULE`, or `remembered #ID`).
    pub decided_by: String,
}

/// The rules in force (reloaded when their directories change) and the
/// remembered choices.
pub struct Rules {
    watcher: PolicyWatcher,
    /// Where the remembered choices live: read from its memory, written
    /// through its storage thread.
    store: Store,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules").finish_non_exhaustive()
    }
}

/// How long the rules may run where blocking is not allowed (a tokio
/// worker) before they are run again where it is. The built-in rules
/// decide a 7-field form in about 45 µs, so almost every form is decided
/// without a hop to another thread.
pub const QUICK: Duration = Duration::from_millis(1);

/// The rules did not decide within [`QUICK`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsLonger;

/// What a decision leaves to deliver: `None` asks the human.
fn spared(decision: Decision) -> Option<PolicyVerdict> {
    let answer = decision.verdict.to_answer()?;
    Some(PolicyVerdict {
        reason: decision
            .reason
            .unwrap_or_else(|| decision.verdict.name().to_owned()),
        decided_by: decision.decided_by,
        answer,
    })
}

fn policy_error(error: elicitd_policy::PolicyError) -> Error {
    Error::Storage(error.to_string())
}

impl Rules {
    /// Loads the rules of `dirs` (the built-in defaults always come first)
    /// and watches them; remembered choices live in `store`. The built-in
    /// secret guard runs before them all unless `secret_guard` is false.
    pub fn start(
        dirs: Vec<PathBuf>,
        limits: Limits,
        store: Store,
        secret_guard: bool,
    ) -> Result<Rules, Error> {
        let guard = if secret_guard {
            SecretGuard::On
        } else {
            tracing::warn!(
                "the secret guard is switched off: forms that ask for secrets reach the rules and the human"
            );
            SecretGuard::Off
        };
        let watcher =
            PolicyWatcher::start_guarded(dirs, Budget::default(), limits, guard).map_err(policy_error)?;
        for (file, problem) in watcher.current().problems() {
            tracing::warn!(file = %file.display(), %problem, "a rules file was skipped");
        }
        Ok(Rules { watcher, store })
    }

    /// The standard rules directories.
    pub fn standard_dirs() -> Vec<PathBuf> {
        Policy::standard_dirs()
    }

    /// Decides `request`; `None` asks the human. A rule that fails asks
    /// the human too, never accepts. May run the rules for their whole
    /// budget: call it where blocking is allowed.
    pub fn decide(&self, request: &Elicitation, origin: &Origin, session: &str) -> Option<PolicyVerdict> {
        let decision =
            self.watcher
                .current()
                .decide_among(&self.store.remembered(), request, origin, session);
        spared(decision)
    }

    /// [`Rules::decide`] within [`QUICK`], so on any thread; `Err` when the
    /// rules need longer, to be asked again with [`Rules::decide`].
    pub fn decide_quickly(
        &self,
        request: &Elicitation,
        origin: &Origin,
        session: &str,
    ) -> Result<Option<PolicyVerdict>, NeedsLonger> {
        self.watcher
            .current()
            .decide_among_within(&self.store.remembered(), request, origin, session, QUICK)
            .map(spared)
            .ok_or(NeedsLonger)
    }

    /// Remembers `answer` for `server` (and below `cwd`, when given), bound
    /// to the executable the proxy verified when there is one.
    pub async fn remember(
        &self,
        server: &str,
        exe: Option<&str>,
        cwd: Option<&str>,
        answer: &Answer,
    ) -> Result<u64, Error> {
        let verdict = match answer.action {
            ElicitationAction::Accept => Verdict::Accept(answer.content.clone().unwrap_or_default()),
            ElicitationAction::Decline => Verdict::Decline,
            _ => Verdict::Cancel,
        };
        Ok(self.store.remember(server, exe, cwd, verdict).await?)
    }

    /// Every remembered choice.
    pub fn remembered(&self) -> Vec<RememberedChoice> {
        self.store.remembered()
    }

    /// Forgets a remembered choice; false if there was none.
    pub async fn forget(&self, id: u64) -> Result<bool, Error> {
        Ok(self.store.forget(id).await?)
    }
}
