//! Who asks, in words for a heading: the names an asker's origin gives,
//! as it sent them, or a translated stand-in where it gave none.

use elicit_i18n::tr;
use elicit_mcp::Origin;

/// The server's name (`elicit ask --server`, an MCP server's own name).
pub fn server_name(origin: &Origin) -> String {
    match &origin.server {
        Some(server) => server.clone(),
        None => tr("an unnamed server"),
    }
}

/// The host's (agent's) name.
pub fn host_name(origin: &Origin) -> String {
    match &origin.host {
        Some(host) => host.clone(),
        None => tr("an unnamed agent"),
    }
}
