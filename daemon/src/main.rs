//! `elicitd`: the per-user broker daemon.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use clap::Parser;
use elicit_proto::dbus::{BROKER_PATH, BUS_NAME};
use elicitd::broker::Broker;
use elicitd::bus::{BrokerIface, watch_departures};
use elicitd::config::Config;
use elicitd::paths;
use elicitd::rules::Rules;
use elicitd::store::Store;

/// The elicitd broker: queues MCP elicitations from every agent and shows
/// them on the user's front-ends.
#[derive(Debug, Parser)]
#[command(name = "elicitd", version, about)]
struct Args {
    /// D-Bus address to serve on [default: $DBUS_SESSION_BUS_ADDRESS].
    #[arg(long, value_name = "ADDRESS")]
    bus: Option<String>,
    /// Directory of the durable queue [default: $XDG_STATE_HOME/elicitd].
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Config file [default: $XDG_CONFIG_HOME/elicitd/config.toml].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Write man pages and shell completions into DIR, then exit (packaging).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_docs: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    elicitd::state_dir::restrict_umask();
    elicitd::logging::init();
    let args = Args::parse();
    if let Some(dir) = &args.generate_docs {
        return generate_docs(dir);
    }
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let config_path = args
        .config
        .or_else(paths::config_file)
        .ok_or_else(|| anyhow!("no home directory: pass --config"))?;
    let config = Config::load(&config_path)?;
    let state_dir = args
        .state_dir
        .or_else(paths::state_dir)
        .ok_or_else(|| anyhow!("no home directory: pass --state-dir"))?;
    for path in elicitd::state_dir::prepare(&state_dir)? {
        tracing::warn!(path = %path.display(), "other users could read this; made it private to you");
    }
    let answers = elicitd::answers::AnswerFiles::open(&state_dir)?;
    let store = Store::open(&state_dir)
        .with_context(|| format!("cannot open the queue in {}", state_dir.display()))?;

    let builder = match &args.bus {
        Some(address) => zbus::connection::Builder::address(address.as_str())?,
        None => zbus::connection::Builder::session()?,
    };
    let conn = builder.build().await.context("cannot connect to the bus")?;
    let rules = if config.policy.enabled {
        let dirs = config
            .policy
            .rules_dirs
            .clone()
            .unwrap_or_else(Rules::standard_dirs);
        Some(Arc::new(Rules::start(
            dirs,
            config.limits.clone(),
            store.remembered()?,
        )?))
    } else {
        None
    };
    let broker = Broker::new(config, store, answers, conn.clone(), rules).await?;
    let (sessions, forms) = broker.restore().await?;
    conn.object_server()
        .at(BROKER_PATH, BrokerIface::new(broker.clone()))
        .await?;
    tokio::spawn(watch(broker.clone()));
    if let Err(error) = conn
        .request_name_with_flags(BUS_NAME, zbus::fdo::RequestNameFlags::DoNotQueue.into())
        .await
    {
        return Err(elicitd::bus::name_taken(&conn, error).await);
    }
    tracing::info!(sessions, forms, state_dir = %state_dir.display(), "elicitd ready on {BUS_NAME}");

    shutdown_signal().await;
    tracing::info!("elicitd stopping");
    if let Err(error) = broker.flush().await {
        tracing::error!(%error, "the last flush failed");
    }
    Ok(())
}

/// The hidden `--generate-docs DIR`: man pages and completions for packaging.
fn generate_docs(dir: &std::path::Path) -> ExitCode {
    elicit_proto::docgen::run(<Args as clap::CommandFactory>::command(), dir)
}

async fn watch(broker: Arc<Broker>) {
    if let Err(error) = watch_departures(broker).await {
        tracing::error!(%error, "lost track of clients leaving the bus");
    }
}

/// SIGTERM (systemd) or SIGINT (a terminal).
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
