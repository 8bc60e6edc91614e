//! How `elicit` reaches a remote MCP server over Streamable HTTP: the
//! user's extra headers and the authorization flags, shared by
//! `elicit proxy --url` and `elicit serve --upstream`.

use elicit_remote::bridge::{self, extra};

use crate::auth_args::AuthArgs;

/// Headers and authorization for a remote server.
#[derive(Debug, clap::Args)]
pub struct RemoteArgs {
    /// A header for every request to the server, as `Name: value`
    /// (repeatable). Secrets belong in --header-file or --header-env.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A file of `Name: value` header lines (`#` comments).
    #[arg(long, value_name = "FILE")]
    header_file: Vec<String>,
    /// A header whose value is an environment variable's, as
    /// `Name=VARIABLE` (e.g. `Authorization=GITHUB_AUTH`).
    #[arg(long, value_name = "NAME=VARIABLE")]
    header_env: Vec<String>,
    #[command(flatten)]
    auth: AuthArgs,
}

impl RemoteArgs {
    /// The bridge's options for `url`: one message is capped as one line
    /// from a command is, and the sign-in consent goes to the broker on
    /// `bus`.
    pub fn options(
        &self,
        url: url::Url,
        bus: Option<&str>,
        max_message_bytes: usize,
    ) -> anyhow::Result<bridge::Options> {
        let mut options = bridge::Options::new(url);
        options.max_message_bytes = max_message_bytes;
        for line in &self.headers {
            extra::add(&mut options.headers, line)?;
        }
        for file in &self.header_file {
            extra::add_file(&mut options.headers, file)?;
        }
        for spec in &self.header_env {
            extra::add_env(&mut options.headers, spec)?;
        }
        options.auth = self.auth.config()?;
        options.auth.bus = bus.map(str::to_owned);
        Ok(options)
    }
}
