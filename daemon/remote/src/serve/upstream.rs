//! The server end of a relay, for each kind of upstream.

use elicit_proto::dbus::Origin;
use elicit_proxy::server::Server;
use tokio::io::{AsyncRead, AsyncWrite};

use super::ServeError;
use super::settings::Upstream;

/// The server's side of one relay.
pub struct ServerEnd {
    /// Lines for the server.
    pub input: Box<dyn AsyncWrite + Send + Unpin>,
    /// Lines from the server.
    pub output: Box<dyn AsyncRead + Send + Unpin>,
    /// Its life.
    pub server: Server,
    /// Who asks, as forms name it.
    pub origin: Origin,
}

/// Starts (a command) or reaches (a URL) the upstream for one relay.
pub fn connect(upstream: &Upstream) -> Result<ServerEnd, ServeError> {
    match upstream {
        Upstream::Command(command) => {
            let (server, (input, output)) = Server::spawn(command)?;
            elicit_proxy::stdio::widen(std::os::fd::AsFd::as_fd(&output));
            Ok(ServerEnd {
                input: Box::new(input),
                output: Box::new(output),
                server,
                origin: elicit_proxy::relay::command_origin(command),
            })
        }
        Upstream::Url(options) => {
            let remote = crate::bridge::open(options.as_ref().clone())?;
            Ok(ServerEnd {
                input: remote.input,
                output: remote.output,
                server: remote.server,
                origin: remote.origin,
            })
        }
    }
}
