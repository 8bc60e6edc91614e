//! `elicit serve --config FILE`: several upstreams under named paths.
//!
//! ```toml
//! listen = "127.0.0.1:8765"          # or: listen = "unix:/run/user/1000/mcp.sock"
//! require_token = true            # or: token_file = "/path/to/token"
//!
//! [[server]]
//! name = "github"
//! upstream = "https://api.example.com/mcp"
//!
//! [[server]]
//! name = "files"
//! command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
//! ```
//!
//! Each server is served at `/NAME/mcp`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ServeError;
use super::listen::Listen;
use super::settings::{Endpoint, Token, Upstream};

/// The file's contents.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where to listen: `IP:PORT` or `unix:PATH`.
    pub listen: Option<Listen>,
    /// Generate a token (written to `token_file`, or the default place).
    #[serde(default)]
    pub require_token: bool,
    /// The token's file.
    pub token_file: Option<PathBuf>,
    /// The upstreams.
    #[serde(default, rename = "server")]
    pub servers: Vec<Server>,
}

/// One `[[server]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    /// The path segment: served at `/NAME/mcp`.
    pub name: String,
    /// A remote server's URL.
    pub upstream: Option<url::Url>,
    /// A stdio server's command line.
    pub command: Option<Vec<String>>,
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Config, ServeError> {
        let text = std::fs::read_to_string(path).map_err(|source| ServeError::ConfigRead {
            path: path.to_owned(),
            source,
        })?;
        let config: Config = toml::from_str(&text).map_err(|error| ServeError::Config {
            path: path.to_owned(),
            message: error.to_string(),
        })?;
        config.endpoints(path)?;
        Ok(config)
    }

    /// The token setting.
    pub fn token(&self) -> Token {
        match (&self.token_file, self.require_token) {
            (file, true) => Token::Generate(file.clone()),
            (Some(file), false) => Token::File(file.clone()),
            (None, false) => Token::None,
        }
    }

    /// The endpoints, one per `[[server]]`.
    pub fn endpoints(&self, path: &Path) -> Result<Vec<Endpoint>, ServeError> {
        let invalid = |message: String| ServeError::Config {
            path: path.to_owned(),
            message,
        };
        let mut endpoints: Vec<Endpoint> = Vec::new();
        for server in &self.servers {
            let name = &server.name;
            // The name becomes one path segment: nothing that needs escaping.
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
            if name.is_empty() || name.starts_with('.') || !name.chars().all(plain) {
                return Err(invalid(format!(
                    "server name {name:?} must be letters, digits, '-', '_' or '.' (it becomes the path /{name}/mcp)"
                )));
            }
            let upstream = match (&server.upstream, &server.command) {
                (Some(url), None) => Upstream::Url(Box::new(crate::bridge::Options::new(url.clone()))),
                (None, Some(command)) if !command.is_empty() => Upstream::Command(command.clone()),
                (None, Some(_)) => return Err(invalid(format!("server {name:?}: command is empty"))),
                _ => {
                    return Err(invalid(format!(
                        "server {name:?}: give exactly one of upstream = \"URL\" or command = [...]"
                    )));
                }
            };
            let path = format!("/{name}/mcp");
            if endpoints.iter().any(|e| e.path == path) {
                return Err(invalid(format!("server name {name:?} is used twice")));
            }
            endpoints.push(Endpoint { path, upstream });
        }
        if endpoints.is_empty() {
            return Err(invalid("no [[server]] given".into()));
        }
        Ok(endpoints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Endpoint>, ServeError> {
        let config: Config = toml::from_str(text).map_err(|e| ServeError::Config {
            path: "t".into(),
            message: e.to_string(),
        })?;
        config.endpoints(Path::new("t"))
    }

    #[test]
    fn servers_are_served_under_their_names() {
        let endpoints = parse(
            "[[server]]\nname = \"gh\"\nupstream = \"https://example.com/mcp\"\n\
             [[server]]\nname = \"files\"\ncommand = [\"srv\", \"-x\"]\n",
        );
        let paths: Vec<String> = endpoints.into_iter().flatten().map(|e| e.path).collect();
        assert_eq!(paths, ["/gh/mcp", "/files/mcp"]);
    }

    #[test]
    fn a_bad_name_or_both_kinds_are_refused() {
        assert!(parse("[[server]]\nname = \"a/b\"\ncommand = [\"x\"]\n").is_err());
        assert!(parse("[[server]]\nname = \"a\"\ncommand = [\"x\"]\nupstream = \"http://h/\"\n").is_err());
        assert!(
            parse(
                "[[server]]\nname = \"a\"\ncommand = [\"x\"]\n[[server]]\nname = \"a\"\ncommand = [\"y\"]\n"
            )
            .is_err()
        );
    }
}
