//! The loaded rules and the decision procedure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use elicit_proto::dbus::Origin;
use elicit_proto::{Elicitation, Limits};
use rhai::{AST, Engine};

use crate::budget::Budget;
use crate::error::PolicyError;
use crate::guard::{self, SecretGuard};
use crate::remember::{Remembered, RememberedChoice};
use crate::sandbox::{self, Rule};
use crate::sources::{self, BUILTIN_NAME, RuleFile};
use crate::verdict::{Decision, Verdict};
use crate::{outcome, view};

/// The rules in force: every usable rules file, compiled, in name order.
///
/// # Precedence
///
/// Files are collected from the compiled-in defaults
/// (`50-elicitd-defaults.rhai`, lowest), then from each directory given to
/// [`Policy::load`] in order — normally [`Policy::standard_dirs`]:
/// `/usr/share/elicitd/rules.d`, `/etc/elicitd/rules.d`,
/// `$XDG_CONFIG_HOME/elicitd/rules.d`. A file in a later directory replaces
/// the file of the same name from an earlier one (an empty file of that name
/// switches a shipped file off). The surviving files run in file-name order,
/// and within a file its rules run in the order they were registered; the
/// first rule that returns a verdict decides.
///
/// A file that cannot be read, does not compile, or fails while its top
/// level runs is skipped and recorded in [`Policy::problems`]; the file of
/// the same name it would have replaced is used instead, so a typo never
/// silently removes a shipped rule.
pub struct Policy {
    engine: Engine,
    files: Vec<LoadedFile>,
    problems: Vec<(PathBuf, String)>,
    budget: Budget,
    limits: Limits,
    secret_guard: SecretGuard,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("files", &self.files())
            .field("problems", &self.problems)
            .field("budget", &self.budget)
            .field("secret_guard", &self.secret_guard)
            .finish_non_exhaustive()
    }
}

/// A compiled rules file and the rules it registered.
struct LoadedFile {
    name: String,
    path: PathBuf,
    ast: AST,
    rules: Vec<Rule>,
}

impl Policy {
    /// Loads the rules files of `dirs` (lowest precedence first) over the
    /// compiled-in defaults, with the default [`Budget`].
    pub fn load(dirs: &[PathBuf]) -> Result<Policy, PolicyError> {
        Self::load_with(dirs, Budget::default(), Limits::default())
    }

    /// Loads as [`Policy::load`] does, with explicit limits for rules and
    /// for the accept content they give.
    pub fn load_with(dirs: &[PathBuf], budget: Budget, limits: Limits) -> Result<Policy, PolicyError> {
        let engine = sandbox::engine(&budget);
        let (groups, mut problems) = sources::collect(dirs);
        let mut files = Vec::new();
        for group in groups {
            if let Some(file) = first_usable(&engine, &budget, group, &mut problems)? {
                files.push(file);
            }
        }
        for (path, problem) in &problems {
            tracing::error!(path = %path.display(), %problem, "rules file skipped");
        }
        Ok(Policy {
            engine,
            files,
            problems,
            budget,
            limits,
            secret_guard: SecretGuard::On,
        })
    }

    /// This policy with the built-in secret guard on or off (it is on
    /// unless switched off here).
    pub fn with_secret_guard(mut self, secret_guard: SecretGuard) -> Policy {
        self.secret_guard = secret_guard;
        self
    }

    /// Whether the built-in secret guard runs.
    pub fn secret_guard(&self) -> SecretGuard {
        self.secret_guard
    }

    /// The standard rules directories, lowest precedence first.
    pub fn standard_dirs() -> Vec<PathBuf> {
        sources::standard_dirs()
    }

    /// Lints every rules file in `dirs`, including those another file
    /// overrides, and the compiled-in defaults: each path with `Ok` or the
    /// problem that keeps it from loading.
    pub fn check(dirs: &[PathBuf]) -> Vec<(PathBuf, Result<(), String>)> {
        let budget = Budget::default();
        let engine = sandbox::engine(&budget);
        let (groups, problems) = sources::collect(dirs);
        let mut report: Vec<(PathBuf, Result<(), String>)> = problems
            .into_iter()
            .map(|(path, problem)| (path, Err(problem)))
            .collect();
        for file in groups.into_iter().flatten() {
            let result = file
                .text
                .and_then(|text| sandbox::load(&engine, &file.name, &text, budget.rule_time).map(|_| ()));
            report.push((file.path, result));
        }
        report
    }

    /// Problems met while loading: each skipped file or unlistable
    /// directory, with the reason.
    pub fn problems(&self) -> &[(PathBuf, String)] {
        &self.problems
    }

    /// The files in force, in the order they run, with the names of their
    /// rules.
    pub fn files(&self) -> Vec<(&Path, Vec<&str>)> {
        self.files
            .iter()
            .map(|file| {
                (
                    file.path.as_path(),
                    file.rules.iter().map(|(name, _)| name.as_str()).collect(),
                )
            })
            .collect()
    }

    /// Decides a request by the secret guard, then the rules. Never fails:
    /// a rule that errors, runs out of budget, returns something that is
    /// not a verdict or accepts with content that does not fit the form
    /// makes the decision "ask the human", and no later rule runs. The
    /// secret guard has spoken before any rule runs, so no rule can keep
    /// it from declining.
    pub fn decide(&self, request: &Elicitation, origin: &Origin, session: &str) -> Decision {
        if let Some(decision) = self.guard(request) {
            return decision;
        }
        self.decide_by_rules(request, origin, session)
    }

    /// The secret guard's decline, when it is on and the form asks for a
    /// secret.
    fn guard(&self, request: &Elicitation) -> Option<Decision> {
        if self.secret_guard == SecretGuard::Off {
            return None;
        }
        guard::inspect(request).map(|reason| Decision {
            verdict: Verdict::Decline,
            decided_by: guard::DECIDED_BY.to_owned(),
            reason: Some(reason),
        })
    }

    fn decide_by_rules(&self, request: &Elicitation, origin: &Origin, session: &str) -> Decision {
        // Without a quick bound the rules always decide (at worst, "ask").
        self.run_rules(request, origin, session, None)
            .unwrap_or_else(Decision::default_ask)
    }

    /// Runs the rules in order; with `quick`, gives up (`None`) as soon as
    /// that instant passes, so that the caller can run them again where
    /// they may take their whole budget. Rules are pure functions of the
    /// request and origin, so running one twice decides the same.
    fn run_rules(
        &self,
        request: &Elicitation,
        origin: &Origin,
        session: &str,
        quick: Option<Instant>,
    ) -> Option<Decision> {
        let started = Instant::now();
        let request_view = view::request(request);
        let origin_view = view::origin(origin, session);
        let past_quick = || quick.is_some_and(|quick| Instant::now() >= quick);
        for file in &self.files {
            for (rule, function) in &file.rules {
                let decided_by = format!("{}: {rule}", file.name);
                if past_quick() {
                    return None;
                }
                if started.elapsed() >= self.budget.decision_time {
                    return Some(
                        self.failed(decided_by, "the policy ran out of time before this rule".into()),
                    );
                }
                let time = match quick {
                    Some(quick) => self
                        .budget
                        .rule_time
                        .min(quick.saturating_duration_since(Instant::now())),
                    None => self.budget.rule_time,
                };
                let returned = sandbox::call(
                    &self.engine,
                    &file.ast,
                    function,
                    request_view.clone(),
                    origin_view.clone(),
                    time,
                );
                let spoken = returned.and_then(|value| outcome::interpret(value, request, &self.limits));
                match spoken {
                    Ok(None) => continue,
                    Ok(Some((verdict, reason))) => {
                        return Some(Decision {
                            verdict,
                            decided_by,
                            reason,
                        });
                    }
                    // Stopped by the quick bound, perhaps: only the whole
                    // budget may call a rule failed for its time.
                    Err(_) if past_quick() => return None,
                    Err(error) => return Some(self.failed(decided_by, error)),
                }
            }
        }
        Some(Decision::default_ask())
    }

    /// Decides a request: the secret guard first, then a remembered choice
    /// for its server (and directory), then the rules. A remembered accept applies only to
    /// a form it answers in full (every field given, all of it valid), so
    /// "always accept" remembered for a confirmation never skips a form
    /// with fields; otherwise the rules decide.
    pub fn decide_with(
        &self,
        remembered: &Remembered,
        request: &Elicitation,
        origin: &Origin,
        session: &str,
    ) -> Decision {
        match remembered.list() {
            Ok(choices) => self.decide_among(&choices, request, origin, session),
            Err(error) => {
                tracing::error!(%error, "cannot read remembered choices; the rules decide");
                self.decide_among(&[], request, origin, session)
            }
        }
    }

    /// [`Policy::decide_with`] over choices already read (a daemon keeps
    /// them in memory, so that deciding touches no storage).
    pub fn decide_among(
        &self,
        choices: &[RememberedChoice],
        request: &Elicitation,
        origin: &Origin,
        session: &str,
    ) -> Decision {
        match self.before_rules(choices, request, origin) {
            Some(decision) => decision,
            None => self.decide_by_rules(request, origin, session),
        }
    }

    /// [`Policy::decide_among`] within `quick`, or `None` when the rules
    /// need longer: most decisions take microseconds and may run where
    /// blocking is not allowed, and the rest run again, with their whole
    /// budget, where it is.
    pub fn decide_among_within(
        &self,
        choices: &[RememberedChoice],
        request: &Elicitation,
        origin: &Origin,
        session: &str,
        quick: Duration,
    ) -> Option<Decision> {
        let until = Instant::now() + quick;
        match self.before_rules(choices, request, origin) {
            Some(decision) => Some(decision),
            None => self.run_rules(request, origin, session, Some(until)),
        }
    }

    /// The secret guard's decision, or else a remembered choice's.
    fn before_rules(
        &self,
        choices: &[RememberedChoice],
        request: &Elicitation,
        origin: &Origin,
    ) -> Option<Decision> {
        if let Some(decision) = self.guard(request) {
            return Some(decision);
        }
        if let Some(choice) = crate::remember::best_choice(choices, origin) {
            match outcome::check_remembered(&choice.verdict, request, &self.limits) {
                Ok(()) => {
                    return Some(Decision {
                        reason: Some(choice.describe()),
                        verdict: choice.verdict.clone(),
                        decided_by: format!("remembered #{}", choice.id),
                    });
                }
                Err(error) => {
                    tracing::info!(id = choice.id, %error, "remembered choice does not fit this form");
                }
            }
        }
        None
    }

    fn failed(&self, decided_by: String, error: String) -> Decision {
        tracing::error!(rule = %decided_by, %error, "rule failed; asking the human");
        Decision {
            verdict: Verdict::Ask,
            decided_by,
            reason: Some(format!("the rule failed: {error}")),
        }
    }
}

/// The highest-precedence candidate of one name that loads; the others'
/// problems are recorded. Only the built-in failing is an error.
fn first_usable(
    engine: &Engine,
    budget: &Budget,
    group: Vec<RuleFile>,
    problems: &mut Vec<(PathBuf, String)>,
) -> Result<Option<LoadedFile>, PolicyError> {
    for file in group {
        let loaded = file
            .text
            .and_then(|text| sandbox::load(engine, &file.name, &text, budget.rule_time));
        match loaded {
            Ok((ast, rules)) => {
                return Ok(Some(LoadedFile {
                    name: file.name,
                    path: file.path,
                    ast,
                    rules,
                }));
            }
            Err(detail) if file.path == Path::new(sources::BUILTIN_PATH) => {
                return Err(PolicyError::Builtin {
                    name: BUILTIN_NAME,
                    detail,
                });
            }
            Err(problem) => problems.push((file.path, problem)),
        }
    }
    Ok(None)
}
