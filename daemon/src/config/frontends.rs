//! `[frontends]`: which front-end shows a form, and which program the
//! daemon starts when no registered front-end can.
//!
//! With no `program` and no `command` in the file, the built-in programs
//! apply ([`default_programs`]): `elicit-gtk` on a display where it is
//! installed, else `elicit-notify` where a notification server with
//! actions runs. `program = []` says "start nothing". Which program starts
//! is a pure rule over [`Facts`], which the launcher reads from the
//! machine.

use std::collections::HashSet;

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
    /// Front-end programs the daemon may start, each with a condition;
    /// `None` (the key absent, and no `command` either) means the built-in
    /// [`default_programs`], and an empty list means none.
    pub program: Option<Vec<Program>>,
}

/// The programs a daemon with no `program` and no `command` configured
/// may start, in this order: the GTK window on a display, else desktop
/// notifications where a server shows their buttons. A program that is
/// not installed is passed over, so the packages decide what applies.
pub fn default_programs() -> Vec<Program> {
    let program = |name: &str, command: &str, when| Program {
        name: name.to_owned(),
        command: vec![command.to_owned()],
        when,
    };
    vec![
        program("gtk", "elicit-gtk", Condition::Display),
        program("notify", "elicit-notify", Condition::Notifications),
    ]
}

/// What the launcher knows of the machine when a form needs a program:
/// read from the daemon's environment and bus by the launcher, made up by
/// the tests.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    /// The daemon's environment variable `name`.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// Whether the program named by a command's first word can be started
    /// (found in `PATH`, or an executable file where it names a path).
    pub installed: &'a dyn Fn(&str) -> bool,
    /// Whether a notification server that shows actions (buttons) runs on
    /// the session bus.
    pub notifications: bool,
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
    /// A display, and a notification server on the session bus that
    /// supports actions (`GetCapabilities` lists `actions`): what
    /// `elicit-notify` needs to take an answer.
    Notifications,
}

impl Condition {
    /// Whether the condition holds on a machine described by `facts`.
    pub fn holds(self, facts: &Facts<'_>) -> bool {
        // An empty variable is as good as none: `DISPLAY=` names no server.
        let set = |name: &str| (facts.var)(name).is_some_and(|value| !value.is_empty());
        match self {
            Condition::Always => true,
            Condition::Display => set("DISPLAY") || set("WAYLAND_DISPLAY"),
            Condition::Wayland => set("WAYLAND_DISPLAY"),
            Condition::X11 => set("DISPLAY"),
            Condition::NoDisplay => !set("DISPLAY") && !set("WAYLAND_DISPLAY"),
            Condition::Notifications => (set("DISPLAY") || set("WAYLAND_DISPLAY")) && facts.notifications,
        }
    }

    /// Whether the condition holds as far as the environment tells, the
    /// notification server aside: it is asked only when this is true.
    fn may_hold(self, facts: &Facts<'_>) -> bool {
        let probed = Facts {
            notifications: true,
            ..*facts
        };
        self.holds(&probed)
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
        let programs = self.program.as_deref().unwrap_or_default();
        for (index, program) in programs.iter().enumerate() {
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
            if programs[..index].iter().any(|p| p.name == program.name) {
                return Err(invalid(
                    key("name"),
                    &format!("`{}` is configured twice", program.name),
                ));
            }
        }
        Ok(())
    }

    /// Every program in the order the launcher tries them: the listed ones
    /// (or the built-in ones, where neither `program` nor `command` is
    /// set) by `preference` (unlisted ones after, in file order), then the
    /// older `command` as an unnamed program that always applies.
    pub fn programs_in_order(&self) -> Vec<Program> {
        let rank = |p: &Program| {
            self.preference
                .iter()
                .position(|name| *name == p.name)
                .unwrap_or(usize::MAX)
        };
        let mut programs = match (&self.program, self.command.is_empty()) {
            (Some(programs), _) => programs.clone(),
            (None, true) => default_programs(),
            (None, false) => Vec::new(),
        };
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

/// The programs of `programs` (in order) that may be started for a form
/// no front-end named in `unwanted` may show, on a machine described by
/// `facts`, as indices: each one's condition holds and it is installed.
/// The launcher starts the first of them that starts, unless one of them
/// runs already.
pub fn eligible(programs: &[Program], unwanted: &HashSet<String>, facts: &Facts<'_>) -> Vec<usize> {
    programs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.name.is_empty() || !unwanted.contains(&p.name))
        .filter(|(_, p)| p.when.holds(facts))
        .filter(|(_, p)| p.command.first().is_some_and(|word| (facts.installed)(word)))
        .map(|(index, _)| index)
        .collect()
}

/// Whether [`eligible`] needs [`Facts::notifications`]: the first program
/// that may apply from the environment alone waits on a notification
/// server. Asking it costs a round trip on the bus, so only then.
pub fn needs_notifications(programs: &[Program], unwanted: &HashSet<String>, facts: &Facts<'_>) -> bool {
    programs
        .iter()
        .filter(|p| p.name.is_empty() || !unwanted.contains(&p.name))
        .filter(|p| p.when.may_hold(facts))
        .find(|p| p.command.first().is_some_and(|word| (facts.installed)(word)))
        .is_some_and(|p| p.when == Condition::Notifications)
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

    fn anything(_: &str) -> bool {
        true
    }

    fn holds(condition: Condition, var: &dyn Fn(&str) -> Option<String>) -> bool {
        condition.holds(&Facts {
            var,
            installed: &anything,
            notifications: false,
        })
    }

    #[test]
    fn conditions_read_the_display_variables() {
        let x11 = env(&[("DISPLAY", ":0")]);
        let wayland = env(&[("WAYLAND_DISPLAY", "wayland-0")]);
        let empty = env(&[("DISPLAY", "")]);
        assert!(holds(Condition::Display, &x11) && holds(Condition::Display, &wayland));
        assert!(!holds(Condition::Display, &empty) && holds(Condition::NoDisplay, &empty));
        assert!(holds(Condition::X11, &x11) && !holds(Condition::X11, &wayland));
        assert!(holds(Condition::Wayland, &wayland) && !holds(Condition::Wayland, &x11));
        assert!(holds(Condition::Always, &empty) && !holds(Condition::NoDisplay, &x11));
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
            program: Some(vec![
                program("tui", &["elicit-tui"]),
                program("notify", &["elicit-notify"]),
                program("gtk", &["elicit-gtk"]),
                program("script", &["my-script"]),
            ]),
        };
        let names: Vec<String> = config.programs_in_order().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["gtk", "notify", "tui", "script", ""]);
    }

    #[test]
    fn bad_programs_are_named() {
        let mut config = FrontendConfig {
            program: Some(vec![program("gtk", &["elicit-gtk"]), program("gtk", &["x"])]),
            ..FrontendConfig::default()
        };
        assert_eq!(
            config.validate().map_err(|e| e.key),
            Err("frontends.program[1].name".to_owned())
        );
        config.program = Some(vec![program("gtk", &[])]);
        assert_eq!(
            config.validate().map_err(|e| e.key),
            Err("frontends.program[0].command".to_owned())
        );
        config.program = Some(vec![program(" ", &["x"])]);
        assert_eq!(
            config.validate().map_err(|e| e.key),
            Err("frontends.program[0].name".to_owned())
        );
        config.program = Some(vec![program("gtk", &["elicit-gtk"])]);
        assert_eq!(config.validate(), Ok(()));
    }

    /// The machine a rule is judged on: a display or none, the programs
    /// installed, and whether a notification server with actions runs.
    struct Machine {
        display: bool,
        installed: Vec<&'static str>,
        notifications: bool,
    }

    impl Machine {
        /// The names of the programs the launcher would try, in order,
        /// for a form nobody in `unwanted` may show; and whether it had to
        /// ask the notification server.
        fn choose(&self, config: &FrontendConfig, unwanted: &[&str]) -> (Vec<String>, bool) {
            let display = self.display.then(|| ":0".to_owned());
            let var = move |name: &str| (name == "DISPLAY").then(|| display.clone()).flatten();
            let installed = |word: &str| self.installed.contains(&word);
            let unasked = Facts {
                var: &var,
                installed: &installed,
                notifications: false,
            };
            let unwanted: HashSet<String> = unwanted.iter().map(|n| (*n).to_owned()).collect();
            let programs = config.programs_in_order();
            // As the launcher does: the server is asked only when needed.
            let asked = needs_notifications(&programs, &unwanted, &unasked);
            let facts = Facts {
                notifications: asked && self.notifications,
                ..unasked
            };
            let names = eligible(&programs, &unwanted, &facts)
                .into_iter()
                .map(|index| programs[index].name.clone())
                .collect();
            (names, asked)
        }
    }

    fn parse(text: &str) -> FrontendConfig {
        toml::from_str(text).expect("a [frontends] table")
    }

    #[test]
    fn with_no_config_the_installed_front_end_for_the_display_is_chosen() {
        let none = FrontendConfig::default();
        let both = ["elicit-gtk", "elicit-notify"];
        let desktop = |installed: &[&'static str], notifications| Machine {
            display: true,
            installed: installed.to_vec(),
            notifications,
        };
        // GTK installed: GTK, and the notification server is not asked.
        assert_eq!(
            desktop(&both, true).choose(&none, &[]),
            (vec!["gtk".into()], false)
        );
        assert_eq!(
            desktop(&["elicit-gtk"], false).choose(&none, &[]),
            (vec!["gtk".into()], false)
        );
        // No GTK: notifications, where a server shows actions.
        assert_eq!(
            desktop(&["elicit-notify"], true).choose(&none, &[]),
            (vec!["notify".into()], true)
        );
        assert_eq!(
            desktop(&["elicit-notify"], false).choose(&none, &[]),
            (vec![], true)
        );
        // GTK passed the form on: notifications next.
        assert_eq!(
            desktop(&both, true).choose(&none, &["gtk"]),
            (vec!["notify".into()], true)
        );
        // No display: nothing, and nobody is asked.
        let headless = Machine {
            display: false,
            installed: both.to_vec(),
            notifications: true,
        };
        assert_eq!(headless.choose(&none, &[]), (vec![], false));
    }

    #[test]
    fn a_configured_program_list_replaces_the_defaults() {
        let desktop = Machine {
            display: true,
            installed: vec!["elicit-gtk", "elicit-notify", "elicit-tui", "foot"],
            notifications: true,
        };
        // An empty list: nothing, ever.
        let nothing = parse("program = []\n");
        assert_eq!(nothing.validate(), Ok(()));
        assert_eq!(desktop.choose(&nothing, &[]), (vec![], false));
        // A list of one's own: only it.
        let tui = parse("[[program]]\nname = \"tui\"\ncommand = [\"foot\", \"elicit-tui\"]\n");
        assert_eq!(desktop.choose(&tui, &[]), (vec!["tui".into()], false));
        // The older `command` alone: only it, as before the defaults.
        let legacy = parse("command = [\"elicit-tui\"]\n");
        assert_eq!(desktop.choose(&legacy, &[]), (vec![String::new()], false));
        // The preference orders the defaults too.
        let notify_first = parse("preference = [\"notify\", \"gtk\"]\n");
        assert_eq!(
            desktop.choose(&notify_first, &[]),
            (vec!["notify".into(), "gtk".into()], true)
        );
    }

    #[test]
    fn a_program_that_is_not_installed_is_passed_over() {
        let desktop = Machine {
            display: true,
            installed: vec!["elicit-notify"],
            notifications: true,
        };
        let config = parse(
            "[[program]]\nname = \"gtk\"\ncommand = [\"elicit-gtk\"]\n\
             [[program]]\nname = \"tui\"\ncommand = [\"elicit-notify\"]\nwhen = \"display\"\n",
        );
        assert_eq!(desktop.choose(&config, &[]), (vec!["tui".into()], false));
    }
}
