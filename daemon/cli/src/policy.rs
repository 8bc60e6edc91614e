//! `elicit policy`: try rules, lint them, and manage remembered choices.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use elicit_client::connect;
use elicit_proto::dbus::{Broker1Proxy, Origin};
use elicit_proto::{Elicitation, Error, Limits};
use elicitd_policy::{Policy, Verdict};
use serde_json::json;

use crate::input::read_capped;
use elicit_i18n::{fill, tr};

use crate::out::{self, esay, say};

/// Try rules, lint them, and manage remembered choices.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Show which rule decides a request, without touching the queue.
    Test {
        /// `elicitation/create` params as JSON (`-` for standard input).
        request: PathBuf,
        /// The origin as JSON: {"server": …, "host": …, "cwd": …, "command": …}.
        #[arg(long, value_name = "ORIGIN.json")]
        origin: Option<PathBuf>,
        /// Rules directories instead of the standard ones (repeatable).
        #[arg(long = "rules-dir", value_name = "DIR")]
        rules_dirs: Vec<PathBuf>,
    },
    /// Lint every rules file; exit 1 if any is broken.
    Check {
        /// Rules directories instead of the standard ones (repeatable).
        #[arg(long = "rules-dir", value_name = "DIR")]
        rules_dirs: Vec<PathBuf>,
    },
    /// List remembered choices ("always, for this server").
    List,
    /// Forget a remembered choice.
    Forget {
        /// Its id, as `elicit policy list` shows it.
        id: u64,
    },
}

fn dirs_or_standard(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    if dirs.is_empty() {
        Policy::standard_dirs()
    } else {
        dirs
    }
}

/// Runs an `elicit policy` subcommand.
pub async fn run(command: Command, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    match command {
        Command::Test {
            request,
            origin,
            rules_dirs,
        } => test(&request, origin.as_deref(), dirs_or_standard(rules_dirs)),
        Command::Check { rules_dirs } => {
            let mut broken = 0;
            for (file, verdict) in Policy::check(&dirs_or_standard(rules_dirs)) {
                match verdict {
                    Ok(()) => say!("{}", fill(&tr("ok      {file}"), &[("file", &file.display())])),
                    Err(problem) => {
                        broken += 1;
                        let line = tr("broken  {file}: {problem}");
                        say!(
                            "{}",
                            fill(&line, &[("file", &file.display()), ("problem", &problem)])
                        );
                    }
                }
            }
            Ok(if broken == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::List => {
            let conn = connect(bus).await?;
            let text = Broker1Proxy::new(&conn)
                .await?
                .list_remembered()
                .await
                .map_err(Error::from)?;
            out::json(&text);
            Ok(ExitCode::SUCCESS)
        }
        Command::Forget { id } => {
            let conn = connect(bus).await?;
            let forgot = Broker1Proxy::new(&conn)
                .await?
                .forget(id)
                .await
                .map_err(Error::from)?;
            if forgot {
                Ok(ExitCode::SUCCESS)
            } else {
                esay!(
                    "elicit: {}",
                    fill(&tr("no remembered choice {id}"), &[("id", &id)])
                );
                Ok(ExitCode::from(1))
            }
        }
    }
}

fn test(
    request: &std::path::Path,
    origin: Option<&std::path::Path>,
    dirs: Vec<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let limits = Limits::default();
    let text = read_capped(request, limits.max_request_bytes)?;
    let params = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", request.display()))?;
    let request = match Elicitation::from_value(params, &limits) {
        Ok(request) => request,
        Err(errors) => {
            out::json(&json!({"verdict": "invalid-request", "errors": errors.to_string()}).to_string());
            return Ok(ExitCode::from(1));
        }
    };
    let origin: Origin = match origin {
        Some(path) => {
            let text = read_capped(path, 64 * 1024)?;
            serde_json::from_str(&text).with_context(|| format!("{} is not an origin", path.display()))?
        }
        None => Origin::default(),
    };
    let policy = Policy::load(&dirs)?;
    for (file, problem) in policy.problems() {
        let line = tr("skipped {file}: {problem}");
        esay!(
            "elicit: {}",
            fill(&line, &[("file", &file.display()), ("problem", &problem)])
        );
    }
    let decision = policy.decide(&request, &origin, "policy-test");
    let content = match &decision.verdict {
        Verdict::Accept(content) if !content.is_null() => Some(content.clone()),
        _ => None,
    };
    out::json(
        &json!({
            "verdict": decision.verdict.name(),
            "decided-by": decision.decided_by,
            "reason": decision.reason,
            "content": content,
        })
        .to_string(),
    );
    Ok(ExitCode::SUCCESS)
}
