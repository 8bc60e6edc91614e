//! `elicit list`, `watch`, `answer`, `history`, `status`: looking at and
//! answering the queue from a terminal or a script.

use std::process::ExitCode;

use anyhow::Context;
use elicit_proto::dbus::Broker1Proxy;
use elicit_proto::{Error, FieldError};
use elicitd::client::connect;
use futures_util::StreamExt;
use serde_json::{Value, json};

async fn broker(bus: Option<&str>) -> anyhow::Result<Broker1Proxy<'static>> {
    let conn = connect(bus).await.context("cannot reach the bus")?;
    Ok(Broker1Proxy::new(&conn).await?)
}

/// Print what `--json` asks for, or a table.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// `elicit list`.
pub async fn list(args: ListArgs, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let text = broker(bus).await?.list_forms().await.map_err(Error::from_dbus)?;
    let forms: Vec<Value> = serde_json::from_str(&text)?;
    if args.json {
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if forms.is_empty() {
        println!("no pending forms");
    }
    for form in &forms {
        let origin = &form["origin"];
        let who = origin["server"]
            .as_str()
            .or(origin["host"].as_str())
            .unwrap_or("?");
        println!(
            "{:>6}  session {:<6} {:<10} {:>6}s  {}  {:?}",
            form["id"],
            form["session"].as_str().unwrap_or("?"),
            form["state"].as_str().unwrap_or("?"),
            form["age-ms"].as_u64().unwrap_or(0) / 1000,
            who,
            form["message"].as_str().unwrap_or(""),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `elicit watch` options.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

/// `elicit watch`: one line per form event until interrupted.
pub async fn watch(args: WatchArgs, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let broker = broker(bus).await?;
    let mut changes = broker.receive_form_changed().await?;
    // FormChanged goes to watchers alone, never to the whole bus.
    broker.watch().await?;
    // Tell a script the subscription is live before any event it causes.
    if args.json {
        println!("{}", json!({"event": "watching"}));
    } else {
        println!("watching form events");
    }
    while let Some(change) = changes.next().await {
        let Ok(a) = change.args() else { continue };
        if args.json {
            println!(
                "{}",
                json!({"event": "form", "form": a.form(), "session": a.session(), "state": a.state(), "reason": a.reason()})
            );
        } else {
            println!(
                "form {} (session {}): {} {}",
                a.form(),
                a.session(),
                a.state(),
                a.reason()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `elicit answer` options.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("outcome").required(true).args(["accept", "decline", "cancel"])))]
pub struct AnswerArgs {
    /// The form id, as `elicit list` shows it.
    form: String,
    /// Accept with this content (a JSON object).
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
    let (action, content) = match (&args.accept, args.decline) {
        (Some(content), _) => ("accept", content.as_str()),
        (None, true) => ("decline", ""),
        (None, false) => ("cancel", ""),
    };
    let broker = broker(bus).await?;
    let claimed = broker.claim(&args.form).await.map_err(Error::from_dbus);
    let (token, _request, _info) = match claimed {
        Ok(claimed) => claimed,
        Err(error) => {
            eprintln!("elicit: cannot answer form {}: {}", args.form, error.detail());
            return Ok(ExitCode::from(1));
        }
    };
    match broker
        .answer(&args.form, &token, action, content)
        .await
        .map_err(Error::from_dbus)
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Error::InvalidAnswer(errors)) => {
            eprintln!("elicit: the answer does not fit form {}:", args.form);
            let errors: Vec<FieldError> = serde_json::from_str(&errors).unwrap_or_default();
            for error in errors {
                eprintln!("  {error}");
            }
            Ok(ExitCode::from(1))
        }
        Err(error) => {
            eprintln!("elicit: cannot answer form {}: {}", args.form, error.detail());
            Ok(ExitCode::from(1))
        }
    }
}

/// `elicit history` options.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// How many records, newest first.
    #[arg(long, default_value_t = 50)]
    limit: u32,
}

/// `elicit history`: finished forms — who asked, which fields, the outcome.
pub async fn history(args: HistoryArgs, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let text = broker(bus)
        .await?
        .history(args.limit)
        .await
        .map_err(Error::from_dbus)?;
    if args.json {
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let records: Vec<Value> = serde_json::from_str(&text)?;
    for r in &records {
        let who = r["origin"]["server"]
            .as_str()
            .or(r["origin"]["host"].as_str())
            .unwrap_or("?");
        println!(
            "{:>6}  {:<8} {:<14} {:<18} {}  {:?}",
            r["form"],
            r["outcome"].as_str().unwrap_or("?"),
            r["reason"].as_str().unwrap_or(""),
            r["answered_by"].as_str().unwrap_or("-"),
            who,
            r["message"].as_str().unwrap_or(""),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `elicit status`: is the broker up, and how busy.
pub async fn status(bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let broker = broker(bus).await?;
    let version = match broker.version().await {
        Ok(version) => version,
        Err(error) => {
            eprintln!("elicitd is not reachable: {error}");
            return Ok(ExitCode::from(1));
        }
    };
    println!("elicitd {version}");
    println!("pending forms: {}", broker.pending().await?);
    println!("sessions:      {}", broker.sessions().await?);
    println!("front-ends:    {}", broker.frontends().await?);
    Ok(ExitCode::SUCCESS)
}
