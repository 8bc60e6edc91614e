//! Why `elicit serve` could not start or go on.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why `elicit serve` could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The listen address is not a loopback address.
    #[error(
        "refusing to listen on {0}: elicit serve listens on loopback only (127.0.0.1, [::1]); \
         reach it from elsewhere through an SSH tunnel"
    )]
    NotLoopback(SocketAddr),
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for (`IP:PORT` or `unix:PATH`).
        address: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// Over TCP, which user a client runs as cannot be learnt here, and
    /// no token is required: every local user could reach the server.
    #[error(
        "cannot learn which user a TCP client runs as ({0}), so every local user could reach this \
         server: give --require-token (or --token-file), or --listen unix:PATH"
    )]
    NoPeerLookup(String),
    /// The token file could not be read or written.
    #[error("token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The token file holds no token.
    #[error("token file {0} is empty")]
    EmptyToken(PathBuf),
    /// `--require-token` without a place for the token.
    #[error("no runtime directory ($XDG_RUNTIME_DIR) to keep the token in: give --token-file")]
    NoRuntimeDir,
    /// The configuration file could not be read.
    #[error("cannot read {path}: {source}")]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The configuration file is not valid.
    #[error("{path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Nothing to serve.
    #[error("nothing to serve: give --upstream URL, a command after --, or a [[server]] in --config")]
    NoUpstream,
    /// The bridge to a URL upstream could not start.
    #[error(transparent)]
    Bridge(#[from] crate::bridge::BridgeError),
    /// The relay in front of the upstream could not start.
    #[error(transparent)]
    Proxy(#[from] elicit_proxy::ProxyError),
    /// The HTTP server failed.
    #[error("the HTTP server failed: {0}")]
    Http(std::io::Error),
}
