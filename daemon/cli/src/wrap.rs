//! `elicit wrap` and `elicit unwrap`: put `elicit proxy --` in front of
//! the MCP servers in the hosts' configs, and take it away again.

use std::process::ExitCode;

use elicit_hosts::{Action, FileReport, Host, Options, Verdict};

use crate::hosts;
use crate::out::say;

/// Which servers of which hosts.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Every host's files: the user's, Claude Code's per-project scopes,
    /// and the project files of the current directory.
    #[arg(long, conflicts_with = "hosts")]
    all: bool,
    /// Only these hosts (all their files).
    #[arg(value_name = "HOST", required_unless_present = "all", value_parser = clap::builder::PossibleValuesParser::new(hosts::host_names()))]
    hosts: Vec<String>,
    /// Only the servers of this name (repeatable).
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
    /// Show what would change, as a diff; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Put `elicit proxy --` in front of the MCP servers in the hosts' configs.
///
/// Each stdio server's command gets `elicit proxy --` in front (and a
/// remote server the proxy can reach as the host would becomes `elicit
/// proxy --url`). Everything else in the files stays as it was; a backup
/// under elicitd's state directory lets `elicit unwrap` give it back.
#[derive(Debug, clap::Args)]
pub struct WrapArgs {
    #[command(flatten)]
    which: Args,
}

/// Give back what `elicit wrap` changed.
///
/// The whole file comes back byte for byte where nothing else changed
/// meanwhile; else only the entries do.
#[derive(Debug, clap::Args)]
pub struct UnwrapArgs {
    #[command(flatten)]
    which: Args,
}

fn selected(args: &Args) -> Vec<Host> {
    if args.all {
        return elicit_hosts::ALL.to_vec();
    }
    elicit_hosts::ALL
        .into_iter()
        .filter(|h| args.hosts.iter().any(|name| name == h.id()))
        .collect()
}

/// `elicit wrap`.
pub fn wrap(args: WrapArgs) -> anyhow::Result<ExitCode> {
    run(&args.which, true)
}

/// `elicit unwrap`.
pub fn unwrap(args: UnwrapArgs) -> anyhow::Result<ExitCode> {
    run(&args.which, false)
}

fn run(args: &Args, wrapping: bool) -> anyhow::Result<ExitCode> {
    let hosts = selected(args);
    let files = hosts::files(&hosts)?;
    let store = hosts::store()?;
    let options = Options {
        program: hosts::elicit().program,
        servers: args.servers.clone(),
        dry_run: args.dry_run,
        // Claude Code holds its lock for a write's milliseconds; longer
        // is a host stuck, whose lock turns stale at 10 s.
        lock_wait: std::time::Duration::from_secs(12),
    };
    let _lock = if args.dry_run { None } else { Some(store.lock()?) };
    if files.is_empty() {
        say!("No host config found (docs/hosts.md says where they are looked for).");
    }
    let mut failed = false;
    for file in &files {
        let report = if wrapping {
            elicit_hosts::wrap(&store, file, &options)
        } else {
            elicit_hosts::unwrap(&store, file, &options)
        };
        failed |= report.error.is_some();
        print(&report, wrapping, args.dry_run);
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print(report: &FileReport, wrapping: bool, dry_run: bool) {
    let head = format!("{} {}", report.file.host.id(), report.file.path.display());
    if let Some(error) = &report.error {
        say!("{head}: {error}");
        return;
    }
    let (done, verb) = match (wrapping, dry_run) {
        (true, false) => (Action::Wrapped, "wrapped"),
        (true, true) => (Action::Wrapped, "would wrap"),
        (false, false) => (Action::Unwrapped, "unwrapped"),
        (false, true) => (Action::Unwrapped, "would unwrap"),
    };
    let names: Vec<&str> = report
        .servers
        .iter()
        .filter(|s| s.action == done)
        .map(|s| s.name.as_str())
        .collect();
    if names.is_empty() {
        say!("{head}: nothing to {}", if wrapping { "wrap" } else { "unwrap" });
    } else {
        say!("{head}: {verb} {}", names.join(", "));
    }
    if wrapping {
        for server in &report.servers {
            if let Verdict::Leave { reason } = &server.verdict {
                say!("  left alone: {}: {reason}", server.name);
            }
        }
    }
    if let Some((before, after)) = &report.preview {
        diff(before, after);
    }
}

/// The changed lines, with three lines of context, as `diff -u` shows.
fn diff(before: &str, after: &str) {
    let diff = similar::TextDiff::from_lines(before, after);
    for group in diff.grouped_ops(3) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                say!("  {sign}{}", change.value().trim_end_matches('\n'));
            }
        }
        say!("  ...");
    }
}
