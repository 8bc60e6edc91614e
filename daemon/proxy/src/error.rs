//! The proxy's own errors: only what stops it altogether. Everything a
//! peer does wrong is answered on the wire instead.

/// Why the proxy could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// No server command was given.
    #[error("no server command given (use `elicit proxy -- CMD ARGS…`)")]
    NoCommand,
    /// The server command could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// Reading or writing a stream failed.
    #[error("{what}: {source}")]
    Io {
        /// Which stream.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
}
