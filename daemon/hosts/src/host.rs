//! Which hosts there are, and which of their files hold MCP servers where:
//! the table of `docs/hosts.md` ("Wiring hosts: elicit wrap") as code.

use std::path::PathBuf;

use serde::Serialize;

/// An MCP host whose configuration `elicit wrap` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Qwen Code (Gemini CLI's settings format).
    Qwen,
    /// VS Code (and Cline inside it).
    VsCode,
    /// Cursor.
    Cursor,
    /// Windsurf.
    Windsurf,
    /// Zed.
    Zed,
    /// opencode.
    Opencode,
    /// GitHub Copilot CLI.
    Copilot,
    /// Goose.
    Goose,
    /// Continue.
    Continue,
    /// Cline CLI (its `cline_mcp_settings.json`, which `cline mcp add`
    /// writes; Cline inside VS Code is `VsCode`).
    Cline,
    /// Claude Desktop (unofficial Linux builds).
    ClaudeDesktop,
}

/// Every host, in the order `elicit hosts` lists them.
pub const ALL: [Host; 14] = [
    Host::Claude,
    Host::Codex,
    Host::Gemini,
    Host::Qwen,
    Host::VsCode,
    Host::Cursor,
    Host::Windsurf,
    Host::Zed,
    Host::Opencode,
    Host::Copilot,
    Host::Goose,
    Host::Continue,
    Host::Cline,
    Host::ClaudeDesktop,
];

impl Host {
    /// The name given on the command line (`elicit wrap claude`).
    pub fn id(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Qwen => "qwen",
            Host::VsCode => "vscode",
            Host::Cursor => "cursor",
            Host::Windsurf => "windsurf",
            Host::Zed => "zed",
            Host::Opencode => "opencode",
            Host::Copilot => "copilot",
            Host::Goose => "goose",
            Host::Continue => "continue",
            Host::Cline => "cline",
            Host::ClaudeDesktop => "claude-desktop",
        }
    }

    /// The host named `id`, if there is one.
    pub fn from_id(id: &str) -> Option<Host> {
        ALL.into_iter().find(|host| host.id() == id)
    }

    /// The format of its files.
    pub fn format(self) -> Format {
        match self {
            Host::Codex => Format::Toml,
            Host::Goose | Host::Continue => Format::Yaml,
            _ => Format::Json,
        }
    }

    /// Where in its files the servers are.
    pub fn servers_key(self) -> &'static str {
        match self {
            Host::Codex => "mcp_servers",
            Host::VsCode => "servers",
            Host::Zed => "context_servers",
            Host::Opencode => "mcp",
            Host::Goose => "extensions",
            _ => "mcpServers",
        }
    }
}

/// How a host's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON, or JSON with comments and trailing commas (JSONC).
    Json,
    /// TOML.
    Toml,
    /// YAML.
    Yaml,
}

/// Whose servers a set of entries is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "scope", content = "dir", rename_all = "lowercase")]
pub enum Scope {
    /// The user's own, for every project.
    User,
    /// Claude Code's local scope: one project's, kept in `~/.claude.json`.
    Local(PathBuf),
    /// A project's file, in the current directory.
    Project,
}

impl Scope {
    /// As `elicit hosts` names it.
    pub fn label(&self) -> String {
        match self {
            Scope::User => "user".to_owned(),
            Scope::Local(dir) => format!("local {}", dir.display()),
            Scope::Project => "project".to_owned(),
        }
    }
}

/// Where servers sit inside a file: the keys down to the object (or, for
/// Continue, the list) that holds them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Section {
    /// Whose servers they are.
    #[serde(flatten)]
    pub scope: Scope,
    /// The keys from the top of the file.
    pub path: Vec<String>,
}

/// One host file that may hold servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostFile {
    /// The host that reads it.
    pub host: Host,
    /// The file.
    pub path: PathBuf,
    /// User or project file (Claude Code's `~/.claude.json` is a user file
    /// that also holds the local scopes, found when it is read).
    #[serde(flatten)]
    pub scope: Scope,
}

/// The directories that decide where host files are: from the
/// environment, or given by a test.
#[derive(Debug, Clone)]
pub struct Places {
    /// `$HOME`.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` [default: `~/.config`].
    pub config: PathBuf,
    /// `$CODEX_HOME` [default: `~/.codex`].
    pub codex_home: PathBuf,
    /// `$COPILOT_HOME` [default: `~/.copilot`].
    pub copilot_home: PathBuf,
    /// Cline's MCP settings: `$CLINE_MCP_SETTINGS_PATH` [default:
    /// `$CLINE_DATA_DIR/settings/cline_mcp_settings.json`, where
    /// `$CLINE_DATA_DIR` defaults to `$CLINE_DIR/data` and `$CLINE_DIR` to
    /// `~/.cline`], as `@cline/shared`'s storage paths resolve it.
    pub cline_settings: PathBuf,
    /// The project: the current directory.
    pub project: PathBuf,
}

impl Places {
    /// From the process environment, relative paths ignored as XDG says.
    pub fn from_env(home: PathBuf, project: PathBuf) -> Places {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let cline_data = var("CLINE_DATA_DIR").unwrap_or_else(|| {
            var("CLINE_DIR")
                .unwrap_or_else(|| home.join(".cline"))
                .join("data")
        });
        Places {
            config: var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            codex_home: var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            copilot_home: var("COPILOT_HOME").unwrap_or_else(|| home.join(".copilot")),
            cline_settings: var("CLINE_MCP_SETTINGS_PATH")
                .unwrap_or_else(|| cline_data.join("settings/cline_mcp_settings.json")),
            home,
            project,
        }
    }

    /// Every file `host` may keep servers in, found or not.
    pub fn files(&self, host: Host) -> Vec<HostFile> {
        let (home, config, project) = (&self.home, &self.config, &self.project);
        let user: Vec<PathBuf> = match host {
            Host::Claude => vec![home.join(".claude.json")],
            Host::Codex => vec![self.codex_home.join("config.toml")],
            Host::Gemini => vec![home.join(".gemini/settings.json")],
            Host::Qwen => vec![home.join(".qwen/settings.json")],
            Host::VsCode => vec![config.join("Code/User/mcp.json")],
            Host::Cursor => vec![home.join(".cursor/mcp.json")],
            Host::Windsurf => vec![home.join(".codeium/windsurf/mcp_config.json")],
            Host::Zed => vec![config.join("zed/settings.json")],
            Host::Opencode => vec![
                config.join("opencode/opencode.json"),
                config.join("opencode/opencode.jsonc"),
            ],
            Host::Copilot => vec![self.copilot_home.join("mcp-config.json")],
            Host::Goose => vec![config.join("goose/config.yaml")],
            Host::Continue => vec![home.join(".continue/config.yaml")],
            Host::Cline => vec![self.cline_settings.clone()],
            Host::ClaudeDesktop => vec![config.join("Claude/claude_desktop_config.json")],
        };
        let in_project: Vec<&str> = match host {
            Host::Claude => vec![".mcp.json"],
            Host::Codex => vec![".codex/config.toml"],
            Host::Gemini => vec![".gemini/settings.json"],
            Host::Qwen => vec![".qwen/settings.json"],
            Host::VsCode => vec![".vscode/mcp.json"],
            Host::Cursor => vec![".cursor/mcp.json"],
            Host::Zed => vec![".zed/settings.json"],
            Host::Opencode => vec!["opencode.json", "opencode.jsonc"],
            _ => vec![],
        };
        let mut files: Vec<HostFile> = user
            .into_iter()
            .map(|path| HostFile {
                host,
                path,
                scope: Scope::User,
            })
            .collect();
        for name in in_project {
            let path = project.join(name);
            // The project may be the home directory: a file is one file.
            if files.iter().all(|file| file.path != path) {
                files.push(HostFile {
                    host,
                    path,
                    scope: Scope::Project,
                });
            }
        }
        files
    }
}

/// The sections of `file` before it is read: one, at the host's key
/// (Claude Code's local scopes are added by the reader).
pub fn top_section(file: &HostFile) -> Section {
    Section {
        scope: file.scope.clone(),
        path: vec![file.host.servers_key().to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_and_copilot_homes_are_honoured() {
        let places = Places {
            home: "/h".into(),
            config: "/c".into(),
            codex_home: "/cx".into(),
            copilot_home: "/cp".into(),
            cline_settings: "/cl/cline_mcp_settings.json".into(),
            project: "/p".into(),
        };
        assert_eq!(
            places.files(Host::Codex)[0].path,
            PathBuf::from("/cx/config.toml")
        );
        assert_eq!(
            places.files(Host::Copilot)[0].path,
            PathBuf::from("/cp/mcp-config.json")
        );
        assert_eq!(
            places.files(Host::Cline)[0].path,
            PathBuf::from("/cl/cline_mcp_settings.json")
        );
        assert_eq!(
            places.files(Host::Zed)[0].path,
            PathBuf::from("/c/zed/settings.json")
        );
        assert_eq!(places.files(Host::Claude)[1].path, PathBuf::from("/p/.mcp.json"));
        for host in ALL {
            assert_eq!(Host::from_id(host.id()), Some(host));
        }
    }
}
