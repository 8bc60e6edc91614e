//! `elicit list`, `watch`, `history`, `status`: looking at the queue from
//! a terminal or a script. Everything a server or client said is printed
//! through [`crate::out`], escaped.

use std::process::ExitCode;

use anyhow::Context;
use elicit_client::connect;
use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, list_all_forms};
use elicit_proto::text::escape_controls;
use futures_util::StreamExt;
use serde_json::{Value, json};

use elicit_i18n::{fill, tr};

use crate::out::{self, esay, say};

/// The broker's proxy on the bus `bus` (the session bus by default).
pub async fn broker(bus: Option<&str>) -> anyhow::Result<Broker1Proxy<'static>> {
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

/// `elicit list`: page by page (`ListFormsPage`), so that it works
/// whatever is queued; `--json` prints the one array it always did, a page
/// at a time.
pub async fn list(args: ListArgs, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let broker = broker(bus).await?;
    let mut forms: Vec<Value> = Vec::new();
    let mut printed = 0usize;
    if args.json {
        out::json_part("[", "");
    }
    let mut unreadable = None;
    list_all_forms(&broker, false, |page| {
        if args.json {
            // The page's entries as the broker wrote them, between the
            // brackets of the one array this prints.
            let inner = page.trim().trim_start_matches('[').trim_end_matches(']').trim();
            if !inner.is_empty() {
                out::json_part(if printed == 0 { "" } else { "," }, "");
                out::json_part(inner, "");
                printed += 1;
            }
            return;
        }
        match serde_json::from_str::<Vec<Value>>(page) {
            // The table keeps only what it shows: its columns line up
            // across all forms, so it is printed at the end.
            Ok(page) => forms.extend(page.iter().map(table_entry)),
            Err(e) => unreadable = Some(e),
        }
    })
    .await?;
    if let Some(e) = unreadable {
        return Err(e.into());
    }
    if args.json {
        out::json_part("]", "\n");
        return Ok(ExitCode::SUCCESS);
    }
    if forms.is_empty() {
        say!("{}", tr("no pending forms"));
    }
    for line in list_table(&forms) {
        say!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What the table shows of a form: not its field names, which may be
/// hundreds of kilobytes.
fn table_entry(form: &Value) -> Value {
    let origin = &form["origin"];
    json!({
        "id": form["id"],
        "session": form["session"],
        "state": form["state"],
        "age-ms": form["age-ms"],
        "origin": {"server": origin["server"], "host": origin["host"]},
        "message": form["message"],
    })
}

/// The lines of `elicit list`: columns as wide as their widest cell, so
/// that they line up whatever the ids' and sessions' lengths.
fn list_table(forms: &[Value]) -> Vec<String> {
    let rows: Vec<[String; 6]> = forms
        .iter()
        .map(|form| {
            let origin = &form["origin"];
            let who = origin["server"]
                .as_str()
                .or(origin["host"].as_str())
                .unwrap_or("?");
            [
                form["id"].to_string(),
                fill(
                    &tr("session {session}"),
                    &[("session", &form["session"].as_str().unwrap_or("?"))],
                ),
                form["state"].as_str().unwrap_or("?").to_owned(),
                format!("{}s", form["age-ms"].as_u64().unwrap_or(0) / 1000),
                // Escaped before measuring, so that widths are as shown.
                escape_controls(who).into_owned(),
                escape_controls(&format!("{:?}", form["message"].as_str().unwrap_or(""))).into_owned(),
            ]
        })
        .collect();
    let width = |column: usize| rows.iter().map(|r| r[column].chars().count()).max().unwrap_or(0);
    let (id, session, state, age, who) = (width(0), width(1), width(2), width(3), width(4));
    rows.iter()
        .map(|r| {
            format!(
                "{:>id$}  {:<session$}  {:<state$}  {:>age$}  {:<who$}  {}",
                r[0], r[1], r[2], r[3], r[4], r[5]
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn list_columns_line_up_at_three_digit_ids() {
        let form = |id: u64, session: &str| {
            json!({"id": id, "session": session, "state": "queued", "age-ms": 1000 * id,
                   "origin": {"server": "s"}, "message": "m"})
        };
        let lines = super::list_table(&[form(7, "3"), form(123, "1004")]);
        let column = |line: &str| line.find("queued");
        assert_eq!(column(&lines[0]), column(&lines[1]), "{lines:#?}");
        assert_eq!(lines[0].find('"'), lines[1].find('"'), "{lines:#?}");
    }
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
    // The daemon exits when idle and a new one knows no watchers: watch
    // again whenever the name gets an owner.
    let mut owners = zbus::fdo::DBusProxy::new(broker.inner().connection())
        .await?
        .receive_name_owner_changed_with_args(&[(0, elicit_proto::dbus::BUS_NAME)])
        .await?;
    // FormChanged goes to watchers alone, never to the whole bus.
    broker.watch().await?;
    // Tell a script the subscription is live before any event it causes.
    if args.json {
        out::json(&json!({"event": "watching"}).to_string());
    } else {
        say!("{}", tr("watching form events"));
    }
    loop {
        let change = tokio::select! {
            change = changes.next() => change,
            owner = owners.next() => {
                let Some(owner) = owner else { break };
                let back = owner.args().is_ok_and(|a| a.new_owner().is_some());
                if back && let Err(error) = broker.watch().await {
                    esay!("elicit watch: the broker is back but refused to be watched: {error}");
                }
                continue;
            }
        };
        let Some(change) = change else { break };
        let Ok(a) = change.args() else { continue };
        if args.json {
            out::json(
                &json!({"event": "form", "form": a.form(), "session": a.session(), "state": a.state(), "reason": a.reason()})
                    .to_string(),
            );
        } else {
            // TRANSLATORS: {state} and {reason} are elicitd's words (queued, closed, timeout…), as they are.
            let line = tr("form {form} (session {session}): {state} {reason}");
            let values: [(&str, &dyn std::fmt::Display); 4] = [
                ("form", &a.form()),
                ("session", &a.session()),
                ("state", &a.state()),
                ("reason", &a.reason()),
            ];
            say!("{}", fill(&line, &values));
        }
    }
    Ok(ExitCode::SUCCESS)
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
        .map_err(Error::from)?;
    if args.json {
        out::json(&text);
        return Ok(ExitCode::SUCCESS);
    }
    let records: Vec<Value> = serde_json::from_str(&text)?;
    for r in &records {
        let who = r["origin"]["server"]
            .as_str()
            .or(r["origin"]["host"].as_str())
            .unwrap_or("?");
        say!(
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
            esay!(
                "{}",
                fill(&tr("elicitd is not reachable: {error}"), &[("error", &error)])
            );
            if let Some(lines) = log_line() {
                for line in lines.lines() {
                    esay!("{line}");
                }
            }
            return Ok(ExitCode::from(1));
        }
    };
    say!("elicitd {version}");
    let frontends = broker.frontends().await?;
    let rows = [
        (tr("pending forms:"), broker.pending().await?),
        (tr("sessions:"), broker.sessions().await?),
        (tr("front-ends:"), frontends),
    ];
    // The numbers line up whatever the words' lengths in this language.
    let width = rows
        .iter()
        .map(|(label, _)| label.chars().count())
        .max()
        .unwrap_or(0);
    for (label, count) in rows {
        let pad = width - label.chars().count();
        say!("{label}{:pad$} {count}", "");
    }
    if frontends == 0 {
        // Forms then wait unseen unless the daemon can start a program:
        // say so, and where to answer them.
        say!(
            "{}",
            tr(
                "No front-end is running: forms wait until one starts. Answer them in a terminal with elicit-tui, or with `elicit list` and `elicit answer`."
            )
        );
    }
    if let Some(lines) = log_line() {
        for line in lines.lines() {
            say!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the default state directory's daemon logs: the file it writes
/// when started without a terminal or the journal (a `dbus-launch`
/// session), else the journal or its standard error; and its PID.
fn log_line() -> Option<String> {
    let dir = elicit_proto::paths::state_dir()?;
    let file = elicit_proto::paths::log_file(&dir);
    let pid = elicit_proto::paths::running_pid(&dir)
        .map(|pid| format!("\npid:           {pid}"))
        .unwrap_or_default();
    Some(if file.exists() {
        format!("log:           {}{pid}", file.display())
    } else {
        format!("log:           the journal (journalctl --user -u elicitd) or its standard error{pid}")
    })
}
