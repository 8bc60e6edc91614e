//! `elicit proxy -- CMD ARGS…` and `elicit proxy --url URL`: the relay in
//! front of an MCP server started over stdio or reached over Streamable
//! HTTP.

use std::process::ExitCode;
use std::time::Duration;

use elicit_proxy::{self as proxy, NoBroker, Options, Prefer};
use elicit_remote::bridge;

use crate::remote_args::RemoteArgs;

/// Run an MCP server behind a relay that answers its elicitations through
/// elicitd; everything else passes through untouched.
///
/// Put `elicit proxy --` in front of the server's command wherever the host
/// starts it. The server's whole process tree goes with the proxy, however
/// the proxy ends (TERM, then KILL; at once on INT or TERM, within a
/// second when the proxy is killed). The proxy exits with the server's
/// exit status.
///
/// For a remote server, have the host start `elicit proxy --url URL`
/// instead: it speaks Streamable HTTP to the server in the era the host
/// negotiates, and stdio to the host.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    relay: RelayArgs,
    /// A remote server's MCP endpoint (Streamable HTTP), instead of a
    /// command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<url::Url>,
    #[command(flatten)]
    remote: RemoteArgs,
    /// The MCP server's command and its arguments.
    #[arg(last = true, required_unless_present = "url", value_name = "CMD")]
    command: Vec<String>,
}

/// How a relay answers elicitations: shared by `proxy` and `serve`.
#[derive(Debug, clap::Args)]
pub struct RelayArgs {
    /// Who answers an elicitation the host declared it can render itself.
    #[arg(long, value_enum, default_value = "broker")]
    prefer: PreferArg,
    /// What elicitations get when elicitd cannot be reached
    /// [default: the host if it declared elicitation, else cancel].
    #[arg(long, value_enum, value_name = "OUTCOME")]
    no_broker: Option<NoBrokerArg>,
    /// Rounds of 2026-07-28 `input_required` one request may take.
    #[arg(long, value_name = "N", default_value_t = 10)]
    max_rounds: u32,
    /// Milliseconds between progress notifications while a form is open.
    #[arg(long, value_name = "MS", default_value_t = 10_000, hide = true)]
    keepalive_ms: u64,
    /// The longest JSON-RPC line accepted from either side, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024, hide = true)]
    max_line_bytes: usize,
    /// Milliseconds the server may take to exit after the host closed
    /// its input, before its process group gets TERM; and again, after
    /// TERM, before KILL.
    #[arg(long, value_name = "MS", default_value_t = 5_000, hide = true)]
    exit_grace_ms: u64,
}

impl RelayArgs {
    /// The cap on one message, from either side.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// The relay's options for `command`, talking to the broker on `bus`.
    pub fn options(&self, command: Vec<String>, bus: Option<&str>) -> Options {
        let mut options = Options::new(command);
        options.bus = bus.map(str::to_owned);
        options.prefer = match self.prefer {
            PreferArg::Host => Prefer::Host,
            PreferArg::Broker => Prefer::Broker,
        };
        options.no_broker = match self.no_broker {
            None => NoBroker::Auto,
            Some(NoBrokerArg::Decline) => NoBroker::Decline,
            Some(NoBrokerArg::Cancel) => NoBroker::Cancel,
            Some(NoBrokerArg::Host) => NoBroker::Host,
        };
        options.max_rounds = self.max_rounds;
        options.keepalive = Duration::from_millis(self.keepalive_ms.max(1));
        options.max_line_bytes = self.max_line_bytes;
        options.exit_grace = Duration::from_millis(self.exit_grace_ms);
        options
    }
}

/// Logs to standard error, at `ELICIT_LOG` (default: warnings).
pub fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ELICIT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // A standard error nobody reads (a host that died) is not worth
        // a line about it on that same standard error.
        .log_internal_errors(false)
        .try_init();
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum PreferArg {
    Host,
    Broker,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum NoBrokerArg {
    Decline,
    Cancel,
    Host,
}

pub async fn run(args: Args, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    init_logging();
    let options = args.relay.options(args.command, bus);
    let code = match args.url {
        Some(url) => {
            let remote = args.remote.options(url, bus, options.max_line_bytes)?;
            let ends = proxy::Ends {
                server: bridge::open(remote)?,
                stop: proxy::relay::stop_on_signals()?,
                host_input: proxy::stdio::host_input(),
                host_output: proxy::stdio::host_output(),
            };
            proxy::run_with(options, ends).await?
        }
        None => proxy::run(options).await?,
    };
    // Exit here rather than return: the runtime would otherwise wait for
    // the blocking read of our stdin, which a host may keep open after its
    // server died.
    std::process::exit(code);
}
