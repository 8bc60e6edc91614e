//! `elicit serve`: a loopback Streamable HTTP endpoint in front of an MCP
//! server, for hosts configured with a URL.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use elicit_remote::serve::config::Config;
use elicit_remote::serve::idle::IdleRules;
use elicit_remote::serve::{self, EndpointSettings, Limits, Listen, Settings, Token, Upstream};
use tokio::signal::unix::{SignalKind, signal};

use crate::out::{esay, note};
use crate::proxy::{RelayArgs, init_logging};
use crate::remote_args::RemoteArgs;

/// Serve an MCP server on a loopback URL, answering its elicitations
/// through elicitd as `elicit proxy` does.
///
/// `elicit serve --listen 127.0.0.1:PORT -- CMD ARGS…` serves a stdio
/// server at `http://127.0.0.1:PORT/mcp` (a process per session);
/// `--config FILE` serves several under `/NAME/mcp`. Only loopback
/// addresses (or a Unix socket, `--listen unix:PATH`) are accepted; only
/// clients of the user serve runs as are served (the kernel says who owns
/// each connection), and requests whose Host or Origin is not this
/// server's are refused (DNS rebinding). Each URL is printed on standard
/// output once bound.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to listen: a loopback IP:PORT (port 0: a free one), or
    /// unix:PATH for a Unix socket of mode 0600 [default: 127.0.0.1:0, or
    /// the config's `listen`].
    #[arg(long, value_name = "ADDR:PORT|unix:PATH", value_parser = parse_listen)]
    listen: Option<Listen>,
    /// Require `Authorization: Bearer TOKEN`, with the token read from
    /// FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "require_token")]
    token_file: Option<PathBuf>,
    /// Require a bearer token made for this run and written (mode 0600) to
    /// $XDG_RUNTIME_DIR/elicitd/serve-token.
    #[arg(long)]
    require_token: bool,
    /// Front a remote Streamable HTTP server.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    upstream: Option<url::Url>,
    /// Seconds a session (2025-era) with no client connection and nothing
    /// waiting for one is kept before it and its server end: hosts that
    /// leave without DELETE are not kept for good.
    #[arg(long, value_name = "SECS", default_value = "300", value_parser = parse_secs)]
    session_idle: Duration,
    /// Seconds such a session is kept while something (a response, a form,
    /// a server request) waits for a client that no stream reaches: a host
    /// killed mid-form.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_secs)]
    session_idle_pending: Duration,
    /// Sessions kept at once per endpoint; when full, a new one ends the
    /// longest-idle session without a client connected.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..))]
    max_sessions: u16,
    /// Serve the `[[server]]`s of a TOML file under `/NAME/mcp`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["upstream", "command"])]
    config: Option<PathBuf>,
    #[command(flatten)]
    relay: RelayArgs,
    #[command(flatten)]
    remote: RemoteArgs,
    /// The stdio MCP server's command and its arguments.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// `IP:PORT`, `localhost:PORT` for 127.0.0.1, or `unix:PATH`.
fn parse_listen(text: &str) -> Result<Listen, String> {
    text.parse()
}

/// Seconds, fractions allowed (`0.5`), at most a day.
fn parse_secs(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|e| format!("{text:?} is not a number of seconds: {e}"))?;
    if !(0.0..=86_400.0).contains(&secs) || secs == 0.0 {
        return Err(format!("{text:?}: give more than 0 and at most 86400 seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Runs `elicit serve` until SIGINT, SIGTERM or SIGHUP.
pub async fn run(args: Args, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    init_logging();
    let settings = settings(args, bus)?;
    let bound = serve::bind(settings).await?;
    match bound.unix_path() {
        Some(path) => {
            let path = path.display();
            for at in bound.paths() {
                esay!(
                    "elicit serve: listening on unix:{path}, at {at} (e.g. curl --unix-socket {path} http://localhost{at})"
                );
            }
        }
        None => {
            for url in bound.urls() {
                esay!("elicit serve: listening on {url}");
            }
        }
    }
    if let Some(file) = bound.token_file() {
        esay!("elicit serve: bearer token written to {}", file.display());
    }
    // Scripts and tests read the URLs here, one a line.
    for url in bound.urls() {
        note(format_args!("{url}"));
    }
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let shutdown = async move {
        tokio::select! {
            _ = terminate.recv() => {},
            _ = hangup.recv() => {},
            _ = interrupt.recv() => {},
        }
    };
    bound.serve(shutdown).await?;
    Ok(ExitCode::SUCCESS)
}

fn settings(args: Args, bus: Option<&str>) -> anyhow::Result<Settings> {
    let cli_token = match (args.token_file, args.require_token) {
        (Some(file), _) => Token::File(file),
        (None, true) => Token::Generate(None),
        (None, false) => Token::None,
    };
    let (listen, token, endpoints) = match &args.config {
        Some(path) => {
            let config = Config::load(path)?;
            let token = match cli_token {
                Token::None => config.token(),
                given => given,
            };
            // The headers and authorization flags apply to every remote
            // server of the file.
            let mut endpoints = config.endpoints(path)?;
            for endpoint in &mut endpoints {
                if let Upstream::Url(options) = &mut endpoint.upstream {
                    let url = options.url.clone();
                    **options = args.remote.options(url, bus, args.relay.max_line_bytes())?;
                }
            }
            (args.listen.or(config.listen), token, endpoints)
        }
        None => {
            let upstream = match (args.upstream, args.command.is_empty()) {
                (Some(url), _) => Upstream::Url(Box::new(args.remote.options(
                    url,
                    bus,
                    args.relay.max_line_bytes(),
                )?)),
                (None, false) => Upstream::Command(args.command.clone()),
                (None, true) => return Err(serve::ServeError::NoUpstream.into()),
            };
            let endpoint = EndpointSettings {
                path: "/mcp".into(),
                upstream,
            };
            (args.listen, cli_token, vec![endpoint])
        }
    };
    Ok(Settings {
        listen: listen.unwrap_or_default(),
        token,
        endpoints,
        proxy: args.relay.options(args.command, bus),
        limits: Limits {
            max_sessions: usize::from(args.max_sessions),
            idle: IdleRules {
                idle: args.session_idle,
                pending: args.session_idle_pending,
            },
            ..Limits::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn a_session_whose_host_left_mid_form_ends_within_45_s_by_default() {
        let cli = Cli::try_parse_from(["serve", "--", "server"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cli.args.session_idle_pending, Duration::from_secs(30));
        let rules = IdleRules {
            idle: cli.args.session_idle,
            pending: cli.args.session_idle_pending,
        };
        // The reaper looks once a tick: the latest a session ends.
        let latest = rules.pending + rules.tick();
        assert!(latest <= Duration::from_secs(45), "{latest:?}");
    }
}
