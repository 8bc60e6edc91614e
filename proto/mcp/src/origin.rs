//! Who is asking: the origin of a form, as a client describes itself and
//! as the broker verified it. Its `a{sv}` form on the bus is
//! `elicit_proto::dbus::OriginDict`.

use serde::{Deserialize, Serialize};

/// Who is asking: what a client says about itself when it opens a session,
/// plus what the daemon verified from the bus (`caller_pid`, `caller_uid`).
///
/// On the bus it is an `a{sv}` with the kebab-case keys of the fields
/// (see `elicit_proto::dbus::OriginDict`); unknown keys are ignored so that
/// clients and daemon can grow apart.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Origin {
    /// The MCP host (the agent or IDE), from `clientInfo.name`.
    pub host: Option<String>,
    /// The host's version.
    pub host_version: Option<String>,
    /// The MCP server, from `serverInfo.name`.
    pub server: Option<String>,
    /// The server's version.
    pub server_version: Option<String>,
    /// The command line the proxy fronts, as the client says.
    pub command: Option<String>,
    /// The working directory of the client, as the client says.
    pub cwd: Option<String>,
    /// The host runs its servers from a hub, a detached process outside
    /// the user's terminal session (Cline's `cline --cline-hub-daemon`):
    /// its name, as the proxy found it. `cwd` is then left out, since the
    /// hub's folder is where it first started, not the project's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hub: Option<String>,
    /// The hub's working directory: where it started, not the project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hub_cwd: Option<String>,
    /// The executable `elicit proxy` resolved and started (a `PATH`
    /// lookup, symlinks resolved): what the proxy knows, where `server` is
    /// only what the MCP server calls itself. Set by the proxy, which the
    /// server cannot influence; another same-uid client could still claim
    /// any value, as it could run any program.
    pub verified_exe: Option<String>,
    /// The arguments the proxy started `verified_exe` with.
    pub verified_args: Option<Vec<String>>,
    /// The pid the client claims.
    pub pid: Option<u32>,
    /// The pid of the bus connection, as the bus daemon reports it.
    pub caller_pid: Option<u32>,
    /// The uid of the bus connection, as the bus daemon reports it.
    pub caller_uid: Option<u32>,
    /// Came in through the asker-only socket (a remote agent); set by the
    /// daemon for every session opened there, whatever the client says.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub remote: bool,
    /// An icon of the asker, as the client says: a name in the desktop's
    /// icon theme (`elicit ask --icon`). Front-ends show it only through
    /// [`Origin::icon_name`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

impl Origin {
    /// The icon to show, when it is a plain icon-theme name (letters,
    /// digits, `-`, `_`, `.`; at most 100 characters). A path or URI is
    /// never one: a front-end or notification server would read whatever
    /// file an asker named.
    pub fn icon_name(&self) -> Option<&str> {
        self.icon.as_deref().filter(|name| is_icon_name(name))
    }

    /// A one-line description for people: "server via host".
    pub fn describe(&self) -> String {
        let server = self.server.as_deref().unwrap_or("an unnamed server");
        let remote = if self.remote { ", remote" } else { "" };
        match &self.host {
            Some(host) => format!("{server} (for {host}{remote})"),
            None if self.remote => format!("{server} (remote)"),
            None => server.to_owned(),
        }
    }
}

/// Whether `name` is a plain icon-theme name; see [`Origin::icon_name`].
pub fn is_icon_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
