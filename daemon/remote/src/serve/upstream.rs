//! The server end of a relay, for each kind of upstream.

use elicit_proxy::ServerEnd;

use super::ServeError;
use super::settings::Upstream;

/// Starts (a command) or reaches (a URL) the upstream for one relay.
pub fn connect(upstream: &Upstream) -> Result<ServerEnd, ServeError> {
    Ok(match upstream {
        Upstream::Command(command) => ServerEnd::command(command)?,
        Upstream::Url(options) => crate::bridge::open(options.as_ref().clone())?,
    })
}
