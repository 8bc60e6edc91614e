//! The flags of MCP authorization for `elicit proxy --url` and `elicit
//! serve`: who this client is to the authorization server, which scopes
//! it asks, where tokens are kept. (To be flattened into those commands.)

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use elicit_remote::auth::{AuthConfig, ClientIdentity, Secret, StoreChoice};
use url::Url;

/// How `elicit` signs in to a remote MCP server that asks for it (OAuth
/// 2.1 as MCP specifies). The sign-in page is offered through elicitd and
/// opens only if you accept it.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Authorization")]
pub struct AuthArgs {
    /// A client id registered in advance with the server's authorization
    /// server [default: a Client ID Metadata Document if given and
    /// accepted, else dynamic registration].
    #[arg(long, value_name = "ID", env = "ELICIT_CLIENT_ID")]
    pub client_id: Option<String>,
    /// A file holding that client's secret (never the secret itself on
    /// the command line, where every user can read it).
    #[arg(
        long,
        value_name = "PATH",
        env = "ELICIT_CLIENT_SECRET_FILE",
        requires = "client_id"
    )]
    pub client_secret_file: Option<PathBuf>,
    /// The https URL of this client's metadata document, used as its
    /// client id where the authorization server accepts that.
    #[arg(long, value_name = "URL", env = "ELICIT_CLIENT_METADATA_URL")]
    pub client_metadata_url: Option<Url>,
    /// The scopes to ask for, instead of those the server names
    /// (repeatable, or several separated by spaces).
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// Where tokens are kept between runs.
    #[arg(long, value_enum, value_name = "STORE", default_value = "auto")]
    pub token_store: TokenStore,
    /// The directory of token files, with `--token-store file`
    /// [default: $XDG_STATE_HOME/elicitd/tokens].
    #[arg(long, value_name = "DIR")]
    pub token_dir: Option<PathBuf>,
    /// How many times in a row to sign in again when the server asks for
    /// no scope beyond what was already asked.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub step_up_limit: u32,
    /// Seconds to wait for your consent and the browser's return.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub auth_timeout: u64,
}

/// Where tokens are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TokenStore {
    /// The Secret Service (GNOME Keyring, KWallet), else a private file.
    Auto,
    /// The Secret Service only.
    SecretService,
    /// A file readable by you alone.
    File,
    /// Nowhere: sign in again on each run.
    None,
}

impl AuthArgs {
    /// The authorization configuration these flags describe; the caller
    /// fills in the bus and the origin (`AuthConfig::bus`, `::origin`).
    pub fn config(&self) -> anyhow::Result<AuthConfig> {
        let client_secret = match &self.client_secret_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading the client secret from {}", path.display()))?;
                Some(Secret::new(text.trim_end_matches(['\r', '\n'])))
            }
            None => None,
        };
        if let Some(url) = &self.client_metadata_url
            && url.scheme() != "https"
        {
            anyhow::bail!("--client-metadata-url must be an https URL, not {url}");
        }
        let scopes: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(str::to_owned)
            .collect();
        let store = match (self.token_store, &self.token_dir) {
            (TokenStore::File, Some(dir)) => StoreChoice::File(dir.clone()),
            (TokenStore::File, None) => StoreChoice::File(
                elicit_proto::paths::state_dir()
                    .context("no state directory (HOME is not set); give --token-dir")?
                    .join("tokens"),
            ),
            (TokenStore::Auto, _) => StoreChoice::Auto,
            (TokenStore::SecretService, _) => StoreChoice::SecretService,
            (TokenStore::None, _) => StoreChoice::Memory,
        };
        let defaults = AuthConfig::default();
        Ok(AuthConfig {
            identity: ClientIdentity {
                client_id: self.client_id.clone(),
                client_secret,
                metadata_document: self.client_metadata_url.clone(),
                ..defaults.identity.clone()
            },
            scopes: (!scopes.is_empty()).then_some(scopes),
            store,
            step_up_limit: self.step_up_limit,
            patience: Duration::from_secs(self.auth_timeout),
            ..defaults
        })
    }
}
