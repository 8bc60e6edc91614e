//! The command-line options every front-end shares, and what
//! `--generate-docs` does with them. Two groups, so that each front-end
//! flattens them where its options always stood: `--bus` first,
//! `--generate-docs` last (the order of the generated completions).

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--bus`, flattened into a front-end's `Args` with `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BusArgs {
    /// The D-Bus address of the bus elicitd is on (default: the session bus,
    /// `DBUS_SESSION_BUS_ADDRESS`).
    #[arg(long, value_name = "ADDRESS")]
    pub bus: Option<String>,
}

/// The hidden `--generate-docs`, flattened last into a front-end's `Args`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DocsArgs {
    /// Write man pages and shell completions into DIR, then exit (packaging).
    #[arg(long, value_name = "DIR", hide = true)]
    pub generate_docs: Option<PathBuf>,
}

/// Parses the command line into `A`, whose [`DocsArgs`] `docs` finds.
/// With `--generate-docs`, the man pages and completions are written from
/// `A`'s definition and the program is done: `Break` carries its exit
/// status.
pub fn parse<A: clap::Parser>(docs: impl FnOnce(&A) -> &DocsArgs) -> ControlFlow<ExitCode, A> {
    let args = A::parse();
    match &docs(&args).generate_docs {
        Some(dir) => ControlFlow::Break(elicit_proto::docgen::run(A::command(), dir)),
        None => ControlFlow::Continue(args),
    }
}
