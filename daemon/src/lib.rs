//! `elicitd`: the per-user broker daemon. A library only so that the
//! packages' multi-call binary can start it; nothing else links the broker.
//!
//! * [`core`] — the broker's rules and state, as plain code without I/O;
//! * [`driver`] — the one task that owns the core and carries out its effects;
//! * [`bus`] — the D-Bus objects, which hand calls to the driver;
//! * [`asker`] — the asker-only socket for remote agents;
//! * [`store`] — what survives a restart;
//! * [`durable`] — what makes the store survive a power cut;
//! * [`config`] — `config.toml`;
//! * [`lifecycle`] — the state directory's lock, PID and log files.

mod answers;
mod asker;
mod bus;
mod config;
mod core;
mod discovery;
mod driver;
mod durable;
mod launcher;
mod lifecycle;
mod logging;
mod rules;
mod state_dir;
mod store;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::bus::{BrokerIface, watch_departures};
use crate::config::Config;
use crate::driver::{Driver, Handle, Stopped};
use crate::lifecycle::StateLock;
use crate::logging::Destination;
use crate::rules::Rules;
use crate::store::Store;
use anyhow::{Context, anyhow};
use clap::Parser;
use elicit_proto::dbus::{BROKER_PATH, BUS_NAME};
use elicit_proto::paths;

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
    /// The asker-only socket for remote agents (peer-to-peer D-Bus; it can
    /// open sessions and ask, nothing else) [default:
    /// $XDG_RUNTIME_DIR/elicitd/agents.sock].
    #[arg(long, value_name = "PATH", env = "ELICITD_ASKER_SOCKET")]
    asker_socket: Option<PathBuf>,
    /// Serve no asker socket.
    #[arg(long, conflicts_with = "asker_socket")]
    no_asker_socket: bool,
    /// Keep running when idle, whatever `[broker] exit-on-idle-secs` says
    /// (by default the daemon exits after 60 s with no session open, and
    /// D-Bus activation starts it again on the next call).
    #[arg(long)]
    no_exit_on_idle: bool,
    /// Write man pages and shell completions into DIR, then exit (packaging).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_docs: Option<PathBuf>,
}

/// The `elicitd` program: what `src/main.rs` runs, and what the packages'
/// multi-call binary (`packaging/multicall`) runs when started as
/// `elicitd`. It never returns: it ends the process with its exit code.
#[tokio::main]
pub async fn main() -> ExitCode {
    // First: every file the daemon makes is private, whatever the
    // caller's umask (D-Bus activation without systemd gives 022).
    crate::state_dir::restrict_umask();
    let args = Args::parse();
    if let Some(dir) = &args.generate_docs {
        return generate_docs(dir);
    }
    // The state directory comes first: it is where the logs go when
    // nobody reads standard error, so a failure to make it is logged after.
    let state_dir = args.state_dir.clone().or_else(paths::state_dir);
    let prepared = state_dir.as_deref().map(lifecycle::create_state_dir);
    let log_file = match (&state_dir, &prepared) {
        (Some(dir), Some(Ok(()))) => Some(lifecycle::log_file(dir)),
        _ => None,
    };
    match logging::init(log_file.as_deref()) {
        Destination::Discarded(why) => tracing::warn!("no log file ({why}): logging to standard error"),
        Destination::File(path) => {
            tracing::info!(pid = std::process::id(), "elicitd logs to {}", path.display())
        }
        Destination::Journal | Destination::Stderr => {}
    }
    let started = match (state_dir, prepared) {
        (Some(dir), Some(Ok(()))) => run(args, dir).await,
        (_, Some(Err(error))) => Err(error.into()),
        _ => Err(anyhow!("no home directory: pass --state-dir")),
    };
    let code = match started {
        Ok(()) => 0,
        Err(error) => {
            tracing::error!("{error:#}");
            1
        }
    };
    // Not through the runtime's drop, which waits for every blocking
    // thread: a write stuck on a dead disk must not keep a stopped daemon
    // alive. What must survive was flushed (or given up on) in `run`.
    std::process::exit(code)
}

/// How long a daemon waits for the one before it to finish its last flush
/// and exit, before it says that another elicitd holds the directory.
const STOPPING_PREDECESSOR: std::time::Duration = std::time::Duration::from_secs(5);

/// How long an orderly stop waits for the last flush.
const LAST_FLUSH: std::time::Duration = std::time::Duration::from_secs(1);

async fn run(args: Args, state_dir: PathBuf) -> anyhow::Result<()> {
    let config_path = args
        .config
        .or_else(paths::config_file)
        .ok_or_else(|| anyhow!("no home directory: pass --config"))?;
    let config = Config::load(&config_path)?;
    let exit_on_idle = match args.no_exit_on_idle {
        true => None,
        false => config.broker.exit_on_idle(),
    };
    for path in crate::state_dir::prepare(&state_dir)? {
        tracing::warn!(path = %path.display(), "other users could read this; made it private to you");
    }
    // Held until the process exits, after sled's files are closed; sled's
    // own lock would only say "could not acquire lock" without naming who.
    StateLock::acquire_waiting(&state_dir, STOPPING_PREDECESSOR)
        .await?
        .hold_until_exit();
    let (store, loaded) = Store::open(&state_dir, config.store.sync)
        .await
        .with_context(|| format!("cannot open the queue in {}", state_dir.display()))?;

    let cap = crate::bus::message_cap(&config.limits);
    let conn = crate::bus::connect(args.bus.as_deref(), cap)
        .await
        .context("cannot connect to the bus")?;
    let rules = if config.policy.enabled {
        let dirs = config
            .policy
            .rules_dirs
            .clone()
            .unwrap_or_else(Rules::standard_dirs);
        Some(Arc::new(Rules::start(
            dirs,
            config.limits.clone(),
            store.clone(),
            config.policy.secret_guard,
        )?))
    } else {
        None
    };
    let mut driver = Driver::new(
        config,
        store.clone(),
        conn.clone(),
        args.bus.clone(),
        rules,
        exit_on_idle.is_some(),
    )
    .await?;
    let (sessions, forms) = driver.restore(loaded).await?;
    let handle = driver.handle();
    conn.object_server()
        .at(BROKER_PATH, BrokerIface::new(handle.clone()))
        .await?;
    let _departures = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(watch(conn.clone(), handle)));
    if let Err(error) = conn
        .request_name_with_flags(BUS_NAME, zbus::fdo::RequestNameFlags::DoNotQueue.into())
        .await
    {
        return Err(crate::bus::name_taken(&conn, error).await);
    }
    let _asker = serve_asker_socket(&args.asker_socket, args.no_asker_socket, &args.bus, cap);
    tracing::info!(sessions, forms, state_dir = %state_dir.display(), "elicitd ready on {BUS_NAME}");
    // For proxies whose host stripped DBUS_SESSION_BUS_ADDRESS; removed
    // when this value drops at the end of `run`.
    let record = record_bus(&conn, args.bus.as_deref()).await;

    // Without systemd nothing stops the daemon when the session ends; its
    // bus going away is that signal, and the next session's daemon needs
    // the state directory. The driver returns when it exits idle.
    let mut driving = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(driver.run()));
    let reason = tokio::select! {
        signal = shutdown_signal() => signal.to_owned(),
        () = conn.closed() => "its bus connection closed".to_owned(),
        stopped = &mut driving => match stopped {
            Ok(Stopped::Idle) => {
                // The bus lives on and can start the next daemon: the
                // record still names a bus where elicitd can be reached.
                if let Some(record) = record {
                    record.keep();
                }
                let secs = exit_on_idle.map_or(0, |p| p.as_secs());
                format!("idle for {secs} s (nothing pending, no session open); D-Bus activation starts it again")
            }
            Ok(Stopped::Closed) => "the broker stopped".to_owned(),
            Err(error) => format!("the broker failed: {error}"),
        },
    };
    tracing::info!("elicitd stopping: {reason}");
    // The driver and every task it owns end here; what was acknowledged
    // is durable already.
    drop(driving);
    // Bounded: a stop must not wait on a disk that no longer answers.
    match tokio::time::timeout(LAST_FLUSH, store.flush()).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::error!(%error, "the last flush failed"),
        Err(_) => tracing::error!("the last flush did not finish within {LAST_FLUSH:?}"),
    }
    Ok(())
}

/// Serves the asker socket that systemd passed (socket activation), or
/// binds one, unless switched off; a socket that cannot be served is
/// logged, and the bus serves on. The socket lives as
/// long as the returned task guard.
fn serve_asker_socket(
    path: &Option<PathBuf>,
    off: bool,
    bus: &Option<String>,
    cap: usize,
) -> Option<tokio_util::task::AbortOnDropHandle<()>> {
    if off {
        return None;
    }
    let socket = match crate::asker::AskerSocket::inherited() {
        Ok(Some(socket)) => Ok(socket),
        Ok(None) => {
            let Some(path) = path.clone().or_else(crate::asker::default_path) else {
                tracing::info!("no $XDG_RUNTIME_DIR: no asker socket (pass --asker-socket PATH)");
                return None;
            };
            crate::asker::AskerSocket::bind(&path)
        }
        Err(error) => Err(error),
    };
    match socket {
        Ok(socket) => {
            tracing::info!(path = %socket.path().display(), "asker socket ready");
            Some(tokio_util::task::AbortOnDropHandle::new(tokio::spawn(
                socket.serve(bus.clone(), cap),
            )))
        }
        Err(error) => {
            tracing::warn!(%error, "serving on the bus only");
            None
        }
    }
}

/// Writes the discovery record of the bus served, named by the bus's ID;
/// a failure is logged, not fatal: only env-stripped proxies need it.
async fn record_bus(conn: &zbus::Connection, bus: Option<&str>) -> Option<crate::discovery::Record> {
    let address = bus
        .map(str::to_owned)
        .or_else(|| std::env::var("DBUS_SESSION_BUS_ADDRESS").ok())?;
    let bus_id = match zbus::fdo::DBusProxy::new(conn).await {
        Ok(dbus) => dbus.get_id().await.map(|id| id.to_string()),
        Err(error) => Err(error.into()),
    };
    let written = match bus_id {
        Ok(bus_id) => crate::discovery::Record::write(&address, &bus_id).map_err(|e| e.to_string()),
        Err(error) => Err(format!("the bus did not say its ID: {error}")),
    };
    match written {
        Ok(record) => {
            tracing::info!(path = %record.path().display(), "recorded the bus address for discovery");
            Some(record)
        }
        Err(error) => {
            tracing::warn!(%error, "could not record the bus address for discovery");
            None
        }
    }
}

/// The hidden `--generate-docs DIR`: man pages and completions for packaging.
fn generate_docs(dir: &std::path::Path) -> ExitCode {
    elicit_proto::docgen::run(<Args as clap::CommandFactory>::command(), dir)
}

async fn watch(conn: zbus::Connection, broker: Handle) {
    if let Err(error) = watch_departures(conn, broker).await {
        tracing::error!(%error, "lost track of clients leaving the bus");
    }
}

/// SIGTERM (systemd) or SIGINT (a terminal); says which.
async fn shutdown_signal() -> &'static str {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = terminate => "SIGTERM",
        _ = tokio::signal::ctrl_c() => "SIGINT",
    }
}
