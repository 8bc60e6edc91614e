//! `config.toml`: the daemon's settings, every key optional.

use std::path::{Path, PathBuf};
use std::time::Duration;

use elicit_proto::Limits;
use serde::Deserialize;

use crate::durable::SyncMode;

mod frontends;

pub use frontends::{Facts, FrontendConfig, Invalid, Program, eligible, needs_notifications};

/// Everything the daemon reads from `$XDG_CONFIG_HOME/elicitd/config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Size limits of requests and answers.
    pub limits: Limits,
    /// Queue limits and timings.
    pub broker: BrokerConfig,
    /// Which front-ends to prefer, and which to start.
    pub frontends: FrontendConfig,
    /// What the history keeps.
    pub history: HistoryConfig,
    /// Where the rules are.
    pub policy: PolicyConfig,
    /// How durable an acknowledged write is.
    pub store: StoreConfig,
}

/// Policy rules.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct PolicyConfig {
    /// Run rules at all; off, every form goes to a human.
    pub enabled: bool,
    /// Rules directories in precedence order (a later file of the same name
    /// overrides an earlier one). Default: `/usr/share/elicitd/rules.d`,
    /// `/etc/elicitd/rules.d`, `$XDG_CONFIG_HOME/elicitd/rules.d`. The
    /// built-in defaults always apply first.
    pub rules_dirs: Option<Vec<std::path::PathBuf>>,
    /// The built-in secret guard, which declines forms that ask for a
    /// secret before any rule or remembered choice runs; off only when
    /// switched off here (or with the whole policy, `enabled = false`).
    pub secret_guard: bool,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            enabled: true,
            rules_dirs: None,
            secret_guard: true,
        }
    }
}

/// Queue limits and timings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct BrokerConfig {
    /// Forms one session may have waiting or shown at once.
    pub forms_per_session: usize,
    /// Sessions one bus connection may hold open.
    pub sessions_per_connection: usize,
    /// Sessions open at once for the daemon's user, across every
    /// connection (the bus and the asker socket alike): the broker serves
    /// only its own uid, so this is every session it holds. More
    /// connections must not buy more sessions.
    pub sessions_per_uid: usize,
    /// Forms waiting or shown across all sessions.
    pub forms_total: usize,
    /// Bytes of request text of the forms waiting, shown or undelivered,
    /// across all sessions: with the per-form limits, what bounds the
    /// memory and the store they take together (a form in memory is a few
    /// times its text).
    pub forms_total_bytes: usize,
    /// How long a session survives its owner leaving the bus, in
    /// milliseconds, so that a client reconnecting at once keeps its forms.
    pub client_grace_ms: u64,
    /// How long a form may wait for an answer, in seconds, when its
    /// submitter gives no timeout; 0 means no deadline.
    pub default_timeout_secs: u64,
    /// How long a front-end may take to accept `Show`, in milliseconds,
    /// before it counts as gone.
    pub show_timeout_ms: u64,
    /// How long the daemon stays with no session open (and so no form
    /// pending) before it exits, in seconds; D-Bus activation starts it
    /// again on the next call. 0 means never; `--no-exit-on-idle` too.
    pub exit_on_idle_secs: u64,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            forms_per_session: 64,
            sessions_per_connection: 16,
            sessions_per_uid: 256,
            forms_total: 100_000,
            forms_total_bytes: 64 << 20,
            client_grace_ms: 500,
            default_timeout_secs: 3600,
            show_timeout_ms: 5000,
            exit_on_idle_secs: 60,
        }
    }
}

impl BrokerConfig {
    /// How long to stay idle before exiting; `None` for never.
    pub fn exit_on_idle(&self) -> Option<Duration> {
        (self.exit_on_idle_secs > 0).then(|| Duration::from_secs(self.exit_on_idle_secs))
    }
}

/// History retention.
/// `[store]`: how durable an acknowledged write is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct StoreConfig {
    /// `full` (survives a power cut) or `process-crash` (survives a crash
    /// of the daemon only, a little faster).
    pub sync: SyncMode,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct HistoryConfig {
    /// Records kept; the oldest go first.
    pub max_records: usize,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig { max_records: 10_000 }
    }
}

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML for this config.
    #[error("{path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        source: toml::de::Error,
    },
    /// A value parses but cannot be used; the message names the key.
    #[error("{path}: {source}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key and what is wrong with it.
        source: Invalid,
    },
}

impl Config {
    /// Reads `path`; a missing file means the defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let config: Config = toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source,
        })?;
        config
            .frontends
            .validate()
            .map_err(|source| ConfigError::Invalid {
                path: path.to_owned(),
                source,
            })?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::frontends::Condition;
    use super::*;

    #[test]
    fn missing_file_means_defaults() {
        let config = Config::load(Path::new("/nonexistent/elicitd/config.toml")).expect("defaults");
        assert_eq!(config, Config::default());
    }

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[broker]\nforms-per-sesion = 3\n").expect("write");
        let error = Config::load(&path).expect_err("typo").to_string();
        assert!(error.contains("forms-per-sesion"), "{error}");
    }

    /// The shipped `packaging/config.toml` must parse, and say the truth:
    /// as shipped (all commented) and with every setting uncommented, it is
    /// the defaults.
    #[test]
    fn shipped_example_is_the_defaults() {
        let text = include_str!("../../packaging/config.toml");
        let as_shipped: Config = toml::from_str(text).expect("shipped config parses");
        assert_eq!(as_shipped, Config::default());
        // `#key = value` and `#[section]` are settings; `# text` is prose.
        let uncommented: String = text
            .lines()
            .map(|line| match line.strip_prefix('#') {
                Some(setting) if !setting.starts_with([' ', '#']) && !setting.is_empty() => setting,
                _ => line,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut every_setting: Config = toml::from_str(&uncommented).expect("settings parse");
        // The example names the standard rules directories to show the
        // syntax; unset is what the default means.
        every_setting.policy.rules_dirs = None;
        // The built-in front-end programs, written out, are what no
        // `program` at all means.
        assert_eq!(
            every_setting.frontends.programs_in_order(),
            Config::default().frontends.programs_in_order(),
            "{uncommented}"
        );
        every_setting.frontends.program = None;
        assert_eq!(every_setting, Config::default(), "{uncommented}");
    }

    #[test]
    fn values_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[broker]\nforms-per-session = 3\n[frontends]\npreference = [\"gtk\", \"tui\"]\n[limits]\nmax-properties = 5\n",
        )
        .expect("write");
        let config = Config::load(&path).expect("valid");
        assert_eq!(config.broker.forms_per_session, 3);
        assert_eq!(config.frontends.preference, ["gtk", "tui"]);
        assert_eq!(config.limits.max_properties, 5);
    }

    #[test]
    fn front_end_programs_are_read_and_checked() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.toml");
        let programs = "[[frontends.program]]\nname = \"gtk\"\ncommand = [\"elicit-gtk\"]\nwhen = \"display\"\n\
            [[frontends.program]]\nname = \"tui\"\ncommand = [\"foot\", \"elicit-tui\"]\n";
        std::fs::write(&path, programs).expect("write");
        let config = Config::load(&path).expect("valid");
        let read = config.frontends.program.unwrap_or_default();
        assert_eq!(read[0].when, Condition::Display);
        assert_eq!(read[1].when, Condition::Always);
        // A condition that does not exist names the key and the choices.
        std::fs::write(&path, programs.replace("display", "screen")).expect("write");
        let error = Config::load(&path).expect_err("bad condition").to_string();
        assert!(error.contains("when") && error.contains("no-display"), "{error}");
        std::fs::write(&path, programs.replace("[\"elicit-gtk\"]", "[]")).expect("write");
        let error = Config::load(&path).expect_err("no command").to_string();
        assert!(error.contains("frontends.program[0].command"), "{error}");
    }
}
