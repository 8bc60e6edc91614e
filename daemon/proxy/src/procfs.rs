//! Processes as `/proc` shows them: who started whom and which group each
//! is in, for ending a server's whole tree.

use rustix::process::Pid;

/// One live process of `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    /// Its id.
    pub pid: i32,
    /// Its parent's id.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
}

/// Every live process now (zombies left out: they no longer run, and
/// where the init process does not reap orphans they would linger). An
/// unreadable `/proc` yields nothing.
pub fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .collect()
}

/// The live processes below `root` (children, their children, …), read
/// from one snapshot of `processes`.
pub fn descendants_in(root: i32, processes: &[Process]) -> Vec<i32> {
    let mut seen = std::collections::HashSet::from([root]);
    let mut found = vec![root];
    let mut next = 0;
    // Each process is added at most once (`seen`): a snapshot read while
    // processes come and go may even hold a cycle of reused ids.
    while next < found.len() {
        let parent = found[next];
        next += 1;
        for process in processes.iter().filter(|p| p.ppid == parent) {
            if seen.insert(process.pid) {
                found.push(process.pid);
            }
        }
    }
    found.remove(0);
    found
}

/// The live processes below this one.
pub fn own_descendants() -> Vec<Pid> {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    descendants_in(me, &processes())
        .into_iter()
        .filter_map(Pid::from_raw)
        .collect()
}

/// Whether some live process is in group `group`.
pub fn group_alive(group: i32) -> bool {
    processes().iter().any(|p| p.pgrp == group)
}

/// A `/proc/PID/stat` line, unless the process is a zombie (or dead). The
/// command name may hold spaces and parentheses, so the fields are read
/// after its last `)`: state, ppid, pgrp.
fn parse_stat(pid: i32, stat: &str) -> Option<Process> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Process { pid, ppid, pgrp })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_read_after_the_command_name() {
        assert_eq!(
            parse_stat(42, "42 (a) b) c) S 1 77 77 0"),
            Some(Process {
                pid: 42,
                ppid: 1,
                pgrp: 77
            })
        );
        assert_eq!(parse_stat(42, "42 (node) Z 1 77 77 0"), None);
    }

    #[test]
    fn descendants_are_every_generation_below_the_root_only() {
        let p = |pid, ppid| Process { pid, ppid, pgrp: pid };
        let snapshot = [p(10, 1), p(11, 10), p(12, 11), p(13, 12), p(20, 1), p(21, 20)];
        let mut below = descendants_in(10, &snapshot);
        below.sort();
        assert_eq!(below, vec![11, 12, 13]);
        assert!(descendants_in(13, &snapshot).is_empty());
    }

    #[test]
    fn this_process_sees_its_own_child() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep starts");
        let pid = Pid::from_raw(child.id() as i32).expect("a pid");
        assert!(own_descendants().contains(&pid));
        let _ = child.kill();
        let _ = child.wait();
    }
}
