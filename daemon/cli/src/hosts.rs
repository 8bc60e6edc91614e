//! `elicit hosts`: every MCP host config found, each server in it, and
//! whether it is wrapped, with where `elicit` is for the hosts; and what
//! `wrap` and `unwrap` share: the places, the host names, the backups.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use elicit_hosts::{FileReport, Host, HostFile, Places, Store, Verdict};
use serde::Serialize;

use crate::out::say;

/// List the MCP host configs found and their servers, wrapped or not.
///
/// Each server is wrapped, to be wrapped, or left alone and why; and the
/// first line says whether `elicit` is on the PATH the hosts will see.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// The names `elicit wrap HOST…` takes.
pub fn host_names() -> Vec<&'static str> {
    elicit_hosts::ALL.iter().map(|h| h.id()).collect()
}

/// The directories hosts read: `$HOME`, the XDG and hosts' own
/// variables, and the current directory as the project.
pub fn places() -> anyhow::Result<Places> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: cannot find the hosts' files"))?;
    let project = std::env::current_dir()?;
    Ok(Places::from_env(home, project))
}

/// The backups of `wrap`: `$XDG_STATE_HOME/elicitd/wrap`, beside the
/// daemon's queue.
pub fn store() -> anyhow::Result<Store> {
    let dir = elicit_proto::paths::state_dir()
        .ok_or_else(|| anyhow::anyhow!("no home directory: cannot find elicitd's state directory"))?;
    Ok(Store::new(dir.join("wrap")))
}

/// Where `elicit` is for the hosts, and what `wrap` writes.
#[derive(Debug, Serialize)]
pub struct Elicit {
    /// The `elicit` found on `PATH`, if any.
    pub on_path: Option<PathBuf>,
    /// Whether that is in a folder every host sees, whoever started it.
    pub everywhere: bool,
    /// What wrapped entries start: `elicit` where the hosts will find
    /// it, else this program's absolute path.
    pub program: String,
}

/// Decides [`Elicit`]. A host started from this terminal sees this
/// `PATH`; one started from the desktop (a launcher, a systemd user
/// service) sees the session's, which has the system folders and, on
/// common distributions, `~/.local/bin` (added by `~/.profile`). So the
/// bare name is written only when `elicit` is found on this `PATH` in one
/// of those folders; otherwise the absolute path of the running `elicit`,
/// which works whoever starts the host.
pub fn elicit() -> Elicit {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut everywhere_dirs = vec![
        PathBuf::from("/usr/bin"),
        PathBuf::from("/usr/local/bin"),
        PathBuf::from("/bin"),
    ];
    if let Some(home) = &home {
        everywhere_dirs.push(home.join(".local/bin"));
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("elicit"))
            .find(|file| is_executable(file))
    });
    let everywhere = on_path
        .as_ref()
        .and_then(|file| file.parent())
        .is_some_and(|dir| everywhere_dirs.iter().any(|d| d == dir));
    let program = if everywhere {
        "elicit".to_owned()
    } else {
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.canonicalize().ok())
            .map_or_else(|| "elicit".to_owned(), |exe| exe.to_string_lossy().into_owned())
    };
    Elicit {
        on_path,
        everywhere,
        program,
    }
}

fn is_executable(file: &Path) -> bool {
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The files of `hosts` that exist.
pub fn files(hosts: &[Host]) -> anyhow::Result<Vec<HostFile>> {
    Ok(elicit_hosts::discover(&places()?, hosts))
}

/// One line for a server, for people.
pub fn describe(verdict: &Verdict, command: &[String]) -> String {
    let command = command.join(" ");
    match verdict {
        Verdict::Wrapped => format!("wrapped ({command})"),
        Verdict::Wrap { .. } => format!("not wrapped ({command})"),
        Verdict::Leave { reason } => format!("left alone: {reason}"),
    }
}

#[derive(Serialize)]
struct Listing<'a> {
    elicit: &'a Elicit,
    files: &'a [FileReport],
}

/// `elicit hosts`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let elicit = elicit();
    let reports: Vec<FileReport> = files(&elicit_hosts::ALL)?
        .iter()
        .map(elicit_hosts::survey)
        .collect();
    if args.json {
        crate::out::json(&serde_json::to_string(&Listing {
            elicit: &elicit,
            files: &reports,
        })?);
        return Ok(ExitCode::SUCCESS);
    }
    match (&elicit.on_path, elicit.everywhere) {
        (Some(path), true) => say!("elicit: {} (on the PATH every host sees)", path.display()),
        (Some(path), false) => say!(
            "elicit: {} is on this PATH only; hosts started elsewhere may not find it, so wrap writes {}",
            path.display(),
            elicit.program
        ),
        (None, _) => say!("elicit: not on PATH; wrap writes {}", elicit.program),
    }
    if reports.is_empty() {
        say!(
            "No host config found (see `elicit hosts --help` and docs/hosts.md for where they are looked for)."
        );
    }
    for report in &reports {
        say!(
            "{} {} ({})",
            report.file.host.id(),
            report.file.path.display(),
            report.file.scope.label()
        );
        if let Some(error) = &report.error {
            say!("  {error}");
        }
        for server in &report.servers {
            let scope = match &server.section.scope {
                elicit_hosts::Scope::Local(dir) => format!("[local {}] ", dir.display()),
                _ => String::new(),
            };
            say!(
                "  {scope}{}: {}",
                server.name,
                describe(&server.verdict, &server.command)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
