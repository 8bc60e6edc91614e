//! `elicit`: the command-line side of elicitd.

mod check;
mod input;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Answer MCP elicitations for every agent on this desktop.
#[derive(Debug, Parser)]
#[command(name = "elicit", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Check(check::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Check(args) => check::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("elicit: {error:#}");
            ExitCode::from(2)
        }
    }
}
