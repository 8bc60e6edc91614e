//! `elicit ask`: a script asks the user through the broker.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use elicit_client::{ClientSession, FormEvent, connect};
use elicit_proto::dbus::Origin;
use elicit_proto::{Action, Error};
use serde_json::json;

use crate::input::read_capped;

/// Ask the user through elicitd and print the answer as JSON.
///
/// Exit status: 0 accepted, 3 declined, 4 cancelled (also on timeout),
/// 1 error (no broker, a refused request), 2 usage.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to ask.
    #[arg(long)]
    message: String,
    /// A JSON Schema file (the `requestedSchema`) for a form; `-` for
    /// standard input. Without it (and without --url) the user is asked to
    /// confirm MESSAGE: a form with no fields, accepted or declined.
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    schema: Option<PathBuf>,
    /// A URL the user is asked to consent to open.
    #[arg(long)]
    url: Option<String>,
    /// Seconds to wait for an answer before the form is cancelled.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Who asks, as the front-ends name it ("deploy.sh asks"); by default
    /// the name of the program that started `elicit ask` (a script's file
    /// name, or the shell).
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
    /// On whose behalf it asks ("asks, for NAME").
    #[arg(long, value_name = "NAME", default_value = "elicit ask")]
    host: String,
    /// An icon the front-ends show with the question: a name in the
    /// desktop's icon theme, such as `utilities-terminal` (no paths).
    #[arg(long, value_name = "ICON-NAME", value_parser = icon_name)]
    icon: Option<String>,
}

/// `--icon`: a plain icon-theme name, as front-ends accept it.
fn icon_name(name: &str) -> Result<String, String> {
    if elicit_proto::dbus::is_icon_name(name) {
        Ok(name.to_owned())
    } else {
        Err("an icon-theme name (letters, digits, '-', '_', '.'), not a path".to_owned())
    }
}

/// The name of the process that started this one (`/proc/PPID/comm`: a
/// script's file name when it runs through its `#!` line), for `--server`
/// left out; `None` where it cannot be read.
fn parent_name() -> Option<String> {
    let parent = std::os::unix::process::parent_id();
    let comm = std::fs::read_to_string(format!("/proc/{parent}/comm")).ok()?;
    Some(comm.trim_end().to_owned()).filter(|name| !name.is_empty())
}

/// How long a submission waits for a broker that died before replying.
const RESTART_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

pub async fn run(args: Args, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let request = match (&args.schema, &args.url) {
        (Some(schema), _) => {
            let text = read_capped(schema, 256 * 1024)?;
            let schema: serde_json::Value =
                serde_json::from_str(&text).with_context(|| format!("{} is not JSON", schema.display()))?;
            json!({"mode": "form", "message": args.message, "requestedSchema": schema})
        }
        (None, Some(url)) => json!({
            "mode": "url",
            "message": args.message,
            "url": url,
            "elicitationId": format!("elicit-ask-{}", std::process::id()),
        }),
        // A yes/no question: the empty object schema is MCP's confirmation.
        (None, None) => json!({
            "mode": "form",
            "message": args.message,
            "requestedSchema": {"type": "object", "properties": {}},
        }),
    };
    let conn = connect(bus).await.context("cannot reach the bus")?;
    let origin = Origin {
        host: Some(args.host),
        server: args.server.or_else(parent_name),
        icon: args.icon,
        command: Some(std::env::args().collect::<Vec<_>>().join(" ")),
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        pid: Some(std::process::id()),
        ..Origin::default()
    };
    let mut session = match ClientSession::open(&conn, &origin).await {
        Ok(session) => session,
        Err(error) => {
            crate::out::esay!("elicit: {}", error.explained());
            return Ok(ExitCode::from(1));
        }
    };
    // Unique to this run, so that a retry after a daemon restart is
    // recognised as the same submission and never queued twice.
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let submission = format!("ask-{}-{started}", std::process::id());
    let form = match session
        .submit_surviving_restart(&request.to_string(), args.timeout, &submission, RESTART_PATIENCE)
        .await
    {
        Ok(form) => form,
        Err(error @ (Error::Storage(_) | Error::Stopping(_) | Error::Bus(_))) => {
            crate::out::esay!("elicit: {}", error.explained());
            return Ok(ExitCode::from(1));
        }
        Err(error) => {
            let why = error.detail();
            let text = elicit_i18n::fill(
                &elicit_i18n::tr("the broker refused the request: {error}"),
                &[("error", &why)],
            );
            crate::out::esay!("elicit: {text}");
            return Ok(ExitCode::from(1));
        }
    };
    let outcome = loop {
        match session.wait_event().await {
            Ok(FormEvent::Answered(answered, outcome)) if answered == form => break outcome,
            // A headless machine: the user at this terminal learns where
            // the form can be answered, rather than waiting on nothing.
            Ok(FormEvent::Unseen(unseen, why)) if unseen == form => {
                let id = form.as_str().rsplit('/').next().unwrap_or_default();
                let text = elicit_i18n::fill(
                    &elicit_i18n::tr(
                        "no front-end shows form {id} ({why}); answer it with elicit-tui, or `elicit answer {id}`",
                    ),
                    &[("id", &id), ("why", &why)],
                );
                crate::out::esay!("elicit: {text}");
            }
            Ok(_) => {}
            Err(error) => {
                crate::out::esay!("elicit: {}", error.explained());
                return Ok(ExitCode::from(1));
            }
        }
    };
    let mut result = json!({"action": outcome.action});
    if let Some(content) = outcome.content {
        result["content"] = content;
    }
    crate::out::json_final(&result.to_string());
    // The form is delivered; closing the session tidies the daemon up.
    let _ = session.close().await;
    Ok(match outcome.action.parse() {
        Ok(Action::Accept) => ExitCode::SUCCESS,
        Ok(Action::Decline) => ExitCode::from(3),
        _ => ExitCode::from(4),
    })
}
