//! `elicit proxy -- CMD ARGS…` and `elicit proxy --url URL`: the relay in
//! front of an MCP server started over stdio or reached over Streamable
//! HTTP.

use std::process::ExitCode;
use std::time::Duration;

use elicit_proxy::{self as proxy, NoBroker, Options, Prefer};
use elicit_remote::auth::Auth;
use elicit_remote::bridge::{self, Remote};

/// Run an MCP server behind a relay that answers its elicitations through
/// elicitd; everything else passes through untouched.
///
/// Put `elicit proxy --` in front of the server's command wherever the host
/// starts it. The server runs in a process group of its own, which goes
/// with it (TERM, then KILL). The proxy exits with the server's exit
/// status.
///
/// For a remote server, have the host start `elicit proxy --url URL`
/// instead: it speaks Streamable HTTP to the server in the era the host
/// negotiates, and stdio to the host.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A remote server's MCP endpoint (Streamable HTTP), instead of a
    /// command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<url::Url>,
    /// A header for every request to `--url`, as `Name: value`
    /// (repeatable). Secrets belong in --header-file or --header-env.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    headers: Vec<String>,
    /// A file of `Name: value` header lines for `--url` (`#` comments).
    #[arg(long, value_name = "FILE", requires = "url")]
    header_file: Vec<String>,
    /// A header for `--url` whose value is an environment variable's, as
    /// `Name=VARIABLE` (e.g. `Authorization=GITHUB_AUTH`).
    #[arg(long, value_name = "NAME=VARIABLE", requires = "url")]
    header_env: Vec<String>,
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
    #[command(flatten)]
    auth: crate::auth_args::AuthArgs,
    /// The MCP server's command and its arguments.
    #[arg(last = true, required_unless_present = "url", value_name = "CMD")]
    command: Vec<String>,
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
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ELICIT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let mut options = Options::new(args.command.clone());
    options.bus = bus.map(str::to_owned);
    options.prefer = match args.prefer {
        PreferArg::Host => Prefer::Host,
        PreferArg::Broker => Prefer::Broker,
    };
    options.no_broker = match args.no_broker {
        None => NoBroker::Auto,
        Some(NoBrokerArg::Decline) => NoBroker::Decline,
        Some(NoBrokerArg::Cancel) => NoBroker::Cancel,
        Some(NoBrokerArg::Host) => NoBroker::Host,
    };
    options.max_rounds = args.max_rounds;
    options.keepalive = Duration::from_millis(args.keepalive_ms.max(1));
    options.max_line_bytes = args.max_line_bytes;
    options.exit_grace = Duration::from_millis(args.exit_grace_ms);
    let code = match &args.url {
        Some(url) => {
            let remote = bridge(url, &args, options.max_line_bytes, bus)?;
            let ends = remote.into_ends(
                proxy::stdio::host_input(),
                proxy::stdio::host_output(),
                proxy::relay::stop_on_signals()?,
            );
            proxy::run_with(options, ends).await?
        }
        None => proxy::run(options).await?,
    };
    // Exit here rather than return: the runtime would otherwise wait for
    // the blocking read of our stdin, which a host may keep open after its
    // server died.
    std::process::exit(code);
}

/// The Streamable HTTP transport to `url`, with the user's extra headers.
/// One message from the server is capped as one line from a command is.
fn bridge(
    url: &url::Url,
    args: &Args,
    max_message_bytes: usize,
    bus: Option<&str>,
) -> anyhow::Result<Remote> {
    let mut options = bridge::Options::new(url.clone());
    options.max_message_bytes = max_message_bytes;
    for line in &args.headers {
        bridge::extra::add(&mut options.headers, line)?;
    }
    for file in &args.header_file {
        bridge::extra::add_file(&mut options.headers, file)?;
    }
    for spec in &args.header_env {
        bridge::extra::add_env(&mut options.headers, spec)?;
    }
    let http = bridge::http_client()?;
    let mut config = args.auth.config()?;
    config.bus = bus.map(str::to_owned);
    config.origin.server = url.host_str().map(str::to_owned);
    let auth = Auth::new(http.clone(), url.clone(), config);
    Ok(bridge::connect(options, http, auth))
}
