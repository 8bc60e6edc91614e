//! `elicit-multicall`: elicitd, elicit, elicit-tui and elicit-notify in one
//! binary, for the Debian package. The program is chosen by the file name
//! it was started under (`argv[0]`), as busybox does: the package installs
//! it as `/usr/bin/elicitd` and the other three names as symlinks to it.

use std::ffi::OsStr;
use std::path::Path;
use std::process::ExitCode;

/// One of the four programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Program {
    Daemon,
    Cli,
    Tui,
    Notify,
}

/// Every name the binary answers to, with its program.
const NAMES: [(&str, Program); 5] = [
    ("elicitd", Program::Daemon),
    ("elicit", Program::Cli),
    // The proxy's warden: `elicit proxy` starts /proc/self/exe under this
    // name (see `elicit_proxy::warden`), and `elicit_cli::main` serves it.
    ("elicit-proxy-warden", Program::Cli),
    ("elicit-tui", Program::Tui),
    ("elicit-notify", Program::Notify),
];

/// The program started as `arg0` (a path or a bare name).
fn program(arg0: &OsStr) -> Option<Program> {
    let name = Path::new(arg0).file_name()?.to_str()?;
    NAMES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, program)| *program)
}

fn main() -> ExitCode {
    let arg0 = std::env::args_os().next().unwrap_or_default();
    match program(&arg0) {
        Some(Program::Daemon) => elicitd::main(),
        Some(Program::Cli) => elicit_cli::main(),
        Some(Program::Tui) => elicit_tui::program::main(),
        Some(Program::Notify) => elicit_notify::program::main(),
        None => {
            let names: Vec<&str> = NAMES.iter().map(|(name, _)| *name).collect();
            eprintln!(
                "elicit-multicall: started as {}: start it as one of {} (a symlink to it of that name)",
                arg0.to_string_lossy(),
                names.join(", ")
            );
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_chooses_the_program_whatever_the_directory() {
        assert_eq!(program(OsStr::new("/usr/bin/elicitd")), Some(Program::Daemon));
        assert_eq!(program(OsStr::new("elicit")), Some(Program::Cli));
        assert_eq!(program(OsStr::new("elicit-proxy-warden")), Some(Program::Cli));
        assert_eq!(program(OsStr::new("./elicit-tui")), Some(Program::Tui));
        assert_eq!(
            program(OsStr::new("/usr/bin/elicit-notify")),
            Some(Program::Notify)
        );
    }

    #[test]
    fn another_name_is_no_program() {
        for name in [
            "elicit-multicall",
            "/proc/self/exe",
            "elicit-gtk",
            "elicitd.old",
            "",
        ] {
            assert_eq!(program(OsStr::new(name)), None, "{name}");
        }
    }
}
