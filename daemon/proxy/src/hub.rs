//! Hosts that run their servers from a hub: a detached process outside
//! the user's terminal session, such as Cline's `cline --cline-hub-daemon`,
//! which outlives the CLI and starts every server in the folder where
//! Cline first ran. The stdio proxy's working directory is then the hub's,
//! not the project the user works in, so the origin says so: `hub` names
//! it, `cwd` is left out and `hub_cwd` keeps the hub's folder, so that a
//! rule or a remembered answer for one project never matches another's
//! forms through the hub's folder.
//!
//! A hub is told by its place among processes: it has no controlling
//! terminal, and it was detached from whoever started it (adopted by init,
//! or by the user's service manager). A host in a terminal has one; an IDE
//! or a script's child keeps its parent.

use elicit_proto::dbus::Origin;

/// The fields of `/proc/PID/stat` the decision reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// Its parent.
    pub ppid: u32,
    /// Its controlling terminal (0: none).
    pub tty_nr: i64,
}

/// Reads a `/proc/PID/stat` line: the command name may hold spaces and
/// parentheses, so the fields are counted after its last `)`: state,
/// ppid, pgrp, session, tty_nr.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let _pgrp = fields.next()?;
    let _session = fields.next()?;
    let tty_nr = fields.next()?.parse().ok()?;
    Some(Stat { ppid, tty_nr })
}

/// Whether the host, whose stat is `host` and whose parent's command name
/// is `parent_comm`, is a hub: no terminal, and adopted by init or by the
/// user's service manager (`systemd --user`).
pub fn is_hub(host: &Stat, parent_comm: Option<&str>) -> bool {
    host.tty_nr == 0 && (host.ppid <= 1 || parent_comm.is_some_and(|c| c.trim() == "systemd"))
}

/// Marks `origin` as asked through the hub `name`: its `cwd` is the
/// hub's, not the project's.
pub fn mark(origin: &mut Origin, name: String) {
    origin.hub = Some(name);
    origin.hub_cwd = origin.cwd.take();
}

/// Whether the stdio proxy's parent, its host, is a hub (see [`is_hub`]);
/// false when `/proc` does not say.
pub async fn host_is_hub() -> bool {
    let host = std::os::unix::process::parent_id();
    if host <= 1 {
        return false;
    }
    let Ok(line) = tokio::fs::read_to_string(format!("/proc/{host}/stat")).await else {
        return false;
    };
    let Some(stat) = parse_stat(&line) else {
        return false;
    };
    let parent_comm = tokio::fs::read_to_string(format!("/proc/{}/comm", stat.ppid))
        .await
        .ok();
    is_hub(&stat, parent_comm.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(ppid: u32, tty_nr: i64) -> Stat {
        Stat { ppid, tty_nr }
    }

    #[test]
    fn the_fields_are_read_after_the_last_parenthesis() {
        assert_eq!(
            parse_stat("4242 (node (hub) x) S 1 4242 4242 0 -1 4194560"),
            Some(stat(1, 0))
        );
        assert_eq!(parse_stat("7 (claude) S 6 7 6 34817 7 0"), Some(stat(6, 34817)));
        assert_eq!(parse_stat("7 claude"), None);
    }

    #[test]
    fn a_detached_process_without_a_terminal_is_a_hub() {
        // Cline's hub: setsid, its starter gone, adopted by init.
        assert!(is_hub(&stat(1, 0), None));
        // Adopted by the user's service manager (a subreaper).
        assert!(is_hub(&stat(900, 0), Some("systemd\n")));
        // A host in a terminal.
        assert!(!is_hub(&stat(1, 34817), None));
        // An IDE's or a script's child, with no terminal: not detached.
        assert!(!is_hub(&stat(900, 0), Some("code")));
        assert!(!is_hub(&stat(900, 0), None));
    }

    #[test]
    fn a_hub_origin_keeps_its_folder_apart_from_cwd() {
        let mut origin = Origin {
            cwd: Some("/home/me/where-cline-first-ran".into()),
            ..Origin::default()
        };
        mark(&mut origin, "cline --cline-hub-daemon".into());
        assert_eq!(origin.cwd, None, "rules see no project folder");
        assert_eq!(origin.hub.as_deref(), Some("cline --cline-hub-daemon"));
        assert_eq!(origin.hub_cwd.as_deref(), Some("/home/me/where-cline-first-ran"));
    }
}
