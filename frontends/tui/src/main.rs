//! `elicit-tui`: the terminal front-end of elicitd.
//!
//! It registers with the broker as the front-end `tui`, shows the forms the
//! broker presents to it, one per asking session, and sends the user's
//! answers back. `--plain` asks line by line instead, for screen readers
//! and dumb terminals.

use std::process::ExitCode;

use clap::Parser;

use elicit_tui::{Args, run};

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(dir) = &args.generate_docs {
        return elicit_proto::docgen::run(<Args as clap::CommandFactory>::command(), dir);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("elicit-tui: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("elicit-tui: {error}");
            ExitCode::FAILURE
        }
    }
}
