//! `elicit`: the command-line side of elicitd.

mod answer;
mod ask;
mod auth_args;
mod check;
mod control;
mod demo;
mod hosts;
mod input;
mod out;
mod policy;
mod proxy;
mod remote_args;
mod serve;
mod wrap;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Answer MCP elicitations for every agent on this desktop.
#[derive(Debug, Parser)]
#[command(name = "elicit", version, about, propagate_version = true)]
struct Cli {
    /// D-Bus address of the broker's bus [default: $DBUS_SESSION_BUS_ADDRESS].
    #[arg(long, global = true, value_name = "ADDRESS")]
    bus: Option<String>,
    /// Reach the broker through its asker-only socket at PATH instead of a
    /// bus (a remote agent: `ssh -R` forwards it). It serves asking only:
    /// `ask`, `proxy` and `serve` work through it, nothing else does.
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        env = "ELICIT_ASKER_SOCKET",
        conflicts_with = "bus"
    )]
    asker_socket: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Check(check::Args),
    Ask(ask::Args),
    /// List pending forms: id, session, state, age, who asks.
    List(control::ListArgs),
    /// Print one line per form event.
    Watch(control::WatchArgs),
    /// Answer a pending form from the command line (the content of an
    /// accept from a file or standard input).
    Answer(answer::AnswerArgs),
    /// Show finished forms (never their answers).
    History(control::HistoryArgs),
    /// Show whether elicitd runs, and its counts.
    Status,
    /// Try rules, lint them, and manage remembered choices.
    #[command(subcommand)]
    Policy(policy::Command),
    /// See elicitd at work: starts a bus, the broker and the terminal UI
    /// with example forms.
    Demo(demo::Args),
    Proxy(Box<proxy::Args>),
    Hosts(hosts::Args),
    Wrap(wrap::WrapArgs),
    Unwrap(wrap::UnwrapArgs),
    Serve(Box<serve::Args>),
    /// Write man pages and shell completions into DIR (packaging).
    #[command(hide = true)]
    GenerateDocs {
        dir: std::path::PathBuf,
    },
}

/// The `elicit` program: what `src/main.rs` runs, and what the packages'
/// multi-call binary (`packaging/multicall`) runs when started as `elicit`.
pub fn main() -> ExitCode {
    // The proxy's warden is this binary started again; it must run before
    // anything else (see `elicit_proxy::warden`).
    if let Some(code) = elicit_proxy::warden::run_if_asked() {
        return code;
    }
    // First, before any thread: see `elicit_i18n::init`.
    elicit_i18n::init();
    let cli = Cli::parse();
    if let Command::GenerateDocs { dir } = &cli.command {
        return generate_docs(dir);
    }
    // Host files: plain file work (and waits for a host's lock), done
    // before any runtime so that no wait blocks one of its workers.
    let cli = match cli.command {
        Command::Hosts(args) => return finish(hosts::run(args)),
        Command::Wrap(args) => return finish(wrap::wrap(args)),
        Command::Unwrap(args) => return finish(wrap::unwrap(args)),
        command => Cli { command, ..cli },
    };
    let asker = cli
        .asker_socket
        .as_ref()
        .map(|path| format!("{}{}", elicit_client::ASKER_ADDRESS_PREFIX, path.display()));
    let bus = asker.as_deref().or(cli.bus.as_deref());
    let outcome = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(async {
            match cli.command {
                Command::Check(args) => check::run(args),
                Command::Ask(args) => ask::run(args, bus).await,
                Command::List(args) => control::list(args, bus).await,
                Command::Watch(args) => control::watch(args, bus).await,
                Command::Answer(args) => answer::answer(args, bus).await,
                Command::History(args) => control::history(args, bus).await,
                Command::Status => control::status(bus).await,
                Command::Policy(command) => policy::run(command, bus).await,
                Command::Demo(args) => demo::run(args, bus).await,
                Command::Proxy(args) => proxy::run(*args, bus).await,
                Command::Serve(args) => serve::run(*args, bus).await,
                Command::Hosts(args) => hosts::run(args),
                Command::Wrap(args) => wrap::wrap(args),
                Command::Unwrap(args) => wrap::unwrap(args),
                Command::GenerateDocs { dir } => Ok(generate_docs(&dir)),
            }
        }),
        Err(error) => Err(error.into()),
    };
    finish(outcome)
}

/// The exit status of a command's outcome, its error printed.
fn finish(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(error) => {
            out::esay!("elicit: {error:#}");
            ExitCode::from(1)
        }
    }
}

/// The hidden `elicit generate-docs DIR`: man pages and completions for
/// packaging.
fn generate_docs(dir: &std::path::Path) -> ExitCode {
    match elicit_proto::docgen::generate(<Cli as clap::CommandFactory>::command(), dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            out::esay!("elicit: cannot write to {}: {error}", dir.display());
            ExitCode::from(2)
        }
    }
}
