//! `elicit answer`: answer a pending form from a terminal or a script.

use std::path::PathBuf;
use std::process::ExitCode;

use elicit_proto::{Action, Error, FieldError, Limits};

use crate::control::broker;
use crate::input::read_capped;
use elicit_i18n::{fill, tr};

use crate::out::esay;

/// `elicit answer` options.
///
/// Give the content of an accept in a file or on standard input
/// (`--accept-file`): a command line is readable by every user of the
/// machine (`ps`, `/proc/PID/cmdline`), so an answer given with `--accept`
/// is not private.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("outcome").required(true).args(["accept_file", "accept", "decline", "cancel"])))]
pub struct AnswerArgs {
    /// The form id, as `elicit list` shows it.
    form: String,
    /// Accept with the content (a JSON object) read from FILE, or from
    /// standard input when FILE is `-`: `elicit answer 7 --accept-file - <<<'{"confirm":true}'`.
    #[arg(long, value_name = "FILE|-")]
    accept_file: Option<PathBuf>,
    /// Accept with this content (a JSON object) given on the command line.
    /// Every user of this machine can read a command line: prefer
    /// --accept-file; this form warns.
    #[arg(long, value_name = "JSON")]
    accept: Option<String>,
    /// Decline.
    #[arg(long)]
    decline: bool,
    /// Cancel.
    #[arg(long)]
    cancel: bool,
}

/// `elicit answer`: claim a form and answer it. Exit 1 with the per-field
/// errors if the broker refuses the answer.
pub async fn answer(args: AnswerArgs, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    // Read before claiming, so that content that cannot be read leaves the
    // form where it was.
    let (action, content) = if let Some(path) = &args.accept_file {
        let text = read_capped(path, Limits::default().max_answer_bytes)?;
        if let Err(error) = serde_json::from_str::<serde_json::Value>(&text) {
            let name = if path.as_os_str() == "-" {
                "standard input".to_owned()
            } else {
                path.display().to_string()
            };
            anyhow::bail!("{name} is not JSON: {error}");
        }
        (Action::Accept, text)
    } else if let Some(content) = args.accept {
        esay!(
            "elicit: {}",
            tr(
                "warning: --accept puts the answer on the command line, where every user of this machine can read it; use --accept-file FILE (or - for standard input)"
            )
        );
        (Action::Accept, content)
    } else if args.decline {
        (Action::Decline, String::new())
    } else {
        (Action::Cancel, String::new())
    };
    let broker = broker(bus).await?;
    let claimed = broker.claim(&args.form).await.map_err(Error::from);
    let (token, _request, _info) = match claimed {
        Ok(claimed) => claimed,
        Err(error) => {
            esay!("elicit: {}", cannot_answer(&args.form, &error));
            return Ok(ExitCode::from(1));
        }
    };
    match broker
        .answer(&args.form, &token, action.as_str(), &content)
        .await
        .map_err(Error::from)
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Error::InvalidAnswer(errors)) => {
            esay!(
                "elicit: {}",
                fill(
                    &tr("the answer does not fit form {form}:"),
                    &[("form", &args.form)]
                )
            );
            let errors: Vec<FieldError> = serde_json::from_str(&errors).unwrap_or_default();
            for error in errors {
                esay!("  {error}");
            }
            Ok(ExitCode::from(1))
        }
        Err(error) => {
            esay!("elicit: {}", cannot_answer(&args.form, &error));
            Ok(ExitCode::from(1))
        }
    }
}

/// "cannot answer form ID: WHY".
fn cannot_answer(form: &str, error: &Error) -> String {
    fill(
        &tr("cannot answer form {form}: {error}"),
        &[("form", &form), ("error", &error.detail())],
    )
}
