//! `[frontends]`: which front-end shows a form, and which program the
//! daemon starts when no registered front-end can.

use serde::Deserialize;

/// Front-end preference and launching.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct FrontendConfig {
    /// Front-end names in order of preference (`gtk`, `notify`, `tui`, …);
    /// names not listed come after, by the priority they registered with.
    /// Programs are tried in this order too.
    pub preference: Vec<String>,
    /// The older single-program form: a program (argv) to start when a form
    /// waits and no front-end can show it. It counts as a program with
    /// `when = "always"` tried after every `[[frontends.program]]`.
    pub command: Vec<String>,
    /// Front-end programs the daemon may start, each with a condition.
    pub program: Vec<Program>,
}

/// One front-end program the daemon may start.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Program {
    /// The name the program registers with (`gtk`, `notify`, `tui`): it
    /// places the program in the preference order, and a program whose
    /// front-end is registered already is not started again.
    pub name: String,
    /// The argv to run; the first word is looked up in `PATH`.
    pub command: Vec<String>,
    /// When the program may be started.
    #[serde(default)]
    pub when: Condition,
}

/// When a front-end program may be started, judged from the daemon's
/// environment at the moment a form needs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    /// Always.
    #[default]
    Always,
    /// A graphical session is reachable: `DISPLAY` or `WAYLAND_DISPLAY`.
    Display,
    /// A Wayland session: `WAYLAND_DISPLAY`.
    Wayland,
    /// An X11 session (or XWayland): `DISPLAY`.
    X11,
    /// Neither `DISPLAY` nor `WAYLAND_DISPLAY` (a headless machine).
    NoDisplay,
}

impl Condition {
    /// Whether the condition holds in an environment read through `var`.
    pub fn holds(self, var: impl Fn(&str) -> Option<String>) -> bool {
        // An empty variable is as good as none: `DISPLAY=` names no server.
        let set = |name: &str| var(name).is_some_and(|value| !value.is_empty());
        match self {
            Condition::Always => true,
            Condition::Display => set("DISPLAY") || set("WAYLAND_DISPLAY"),
            Condition::Wayland => set("WAYLAND_DISPLAY"),
            Condition::X11 => set("DISPLAY"),
            Condition::NoDisplay => !set("DISPLAY") && !set("WAYLAND_DISPLAY"),
        }
    }
}

/// A `[frontends]` value that parses but cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct Invalid {
    /// The key, as a path (`frontends.program[2].command`).
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl FrontendConfig {
    /// Checks what serde cannot: names and commands that are there, and
    /// each name once.
    pub fn validate(&self) -> Result<(), Invalid> {
        let invalid = |key: String, message: &str| Invalid {
            key,
            message: message.to_owned(),
        };
        if self.command.first().is_some_and(|program| program.is_empty()) {
            return Err(invalid("frontends.command".into(), "the program name is empty"));
        }
        for (index, program) in self.program.iter().enumerate() {
            let key = |field: &str| format!("frontends.program[{index}].{field}");
            if program.name.trim().is_empty() {
                return Err(invalid(
                    key("name"),
                    "a program needs a name (`gtk`, `notify`, `tui`, …)",
                ));
            }
            if program.command.first().is_none_or(|word| word.is_empty()) {
                return Err(invalid(
                    key("command"),
                    "must name the program to run, e.g. [\"elicit-gtk\"]",
                ));
            }
            if self.program[..index].iter().any(|p| p.name == program.name) {
                return Err(invalid(
                    key("name"),
                    &format!("`{}` is configured twice", program.name),
                ));
            }
        }
        Ok(())
    }

    /// Every program in the order the launcher tries them: the listed ones
    /// by `preference` (unlisted ones after, in file order), then the
    /// older `command` as an unnamed program that always applies.
    pub fn programs_in_order(&self) -> Vec<Program> {
        let rank = |p: &Program| {
            self.preference
                .iter()
                .position(|name| *name == p.name)
                .unwrap_or(usize::MAX)
        };
        let mut programs = self.program.clone();
        // A stable sort keeps file order among equal ranks.
        programs.sort_by_key(rank);
        if !self.command.is_empty() {
            programs.push(Program {
                name: String::new(),
                command: self.command.clone(),
                when: Condition::Always,
            });
        }
        programs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn conditions_read_the_display_variables() {
        let x11 = env(&[("DISPLAY", ":0")]);
        let wayland = env(&[("WAYLAND_DISPLAY", "wayland-0")]);
        let empty = env(&[("DISPLAY", "")]);
        assert!(Condition::Display.holds(&x11) && Condition::Display.holds(&wayland));
        assert!(!Condition::Display.holds(&empty) && Condition::NoDisplay.holds(&empty));
        assert!(Condition::X11.holds(&x11) && !Condition::X11.holds(&wayland));
        assert!(Condition::Wayland.holds(&wayland) && !Condition::Wayland.holds(&x11));
        assert!(Condition::Always.holds(&empty) && !Condition::NoDisplay.holds(&x11));
    }

    fn program(name: &str, command: &[&str]) -> Program {
        Program {
            name: name.into(),
            command: command.iter().map(|w| (*w).to_owned()).collect(),
            when: Condition::Always,
        }
    }

    #[test]
    fn programs_follow_the_preference_then_the_file_then_command() {
        let config = FrontendConfig {
            preference: vec!["gtk".into(), "notify".into()],
            command: vec!["legacy".into()],
            program: vec![
                program("tui", &["elicit-tui"]),
                program("notify", &["elicit-notify"]),
                program("gtk", &["elicit-gtk"]),
                program("script", &["my-script"]),
            ],
        };
        let names: Vec<String> = config.programs_in_order().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["gtk", "notify", "tui", "script", ""]);
    }

    #[test]
    fn bad_programs_are_named() {
        let mut config = FrontendConfig {
            program: vec![program("gtk", &["elicit-gtk"]), program("gtk", &["x"])],
            ..FrontendConfig::default()
        };
        assert_eq!(
            config.validate().map_err(|e| e.key),
            Err("frontends.program[1].name".to_owned())
        );
        config.program = vec![program("gtk", &[])];
        assert_eq!(
            config.validate().map_err(|e| e.key),
            Err("frontends.program[0].command".to_owned())
        );
        config.program = vec![program(" ", &["x"])];
        assert_eq!(
            config.validate().map_err(|e| e.key),
            Err("frontends.program[0].name".to_owned())
        );
        config.program = vec![program("gtk", &["elicit-gtk"])];
        assert_eq!(config.validate(), Ok(()));
    }
}
