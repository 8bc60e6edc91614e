//! Processes as `/proc` shows them: who started whom, and which group
//! each is in, for tests of process trees.

/// One `/proc/PID/stat`: (pid, state, ppid, pgrp); the command name may
/// hold spaces, so fields are read after its last `)`.
fn stat(pid: &str) -> Option<(u32, String, u32, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.to_owned();
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((pid.parse().ok()?, state, ppid, pgrp))
}

/// Every process now as (pid, ppid, pgrp), zombies left out (they no longer run; where init
/// does not reap, they would linger).
pub fn processes() -> Vec<(u32, u32, u32)> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| stat(&e.file_name().to_string_lossy()))
        .filter(|(_, state, _, _)| state != "Z" && state != "X")
        .map(|(pid, _, ppid, pgrp)| (pid, ppid, pgrp))
        .collect()
}

/// The live children of `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|(_, ppid, _)| *ppid == parent)
        .map(|(pid, _, _)| pid)
        .collect()
}

/// The live members of process group `group`.
pub fn group_members(group: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|(_, _, pgrp)| *pgrp == group)
        .map(|(pid, _, _)| pid)
        .collect()
}

/// `kill SIGNAL PID`, which must succeed.
pub fn kill(signal: &str, pid: u32) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} {pid}");
}

/// True once process `pid` has exited: gone, or a zombie (or dead) that
/// its parent has not reaped yet.
pub fn exited(pid: u32) -> bool {
    match stat(&pid.to_string()) {
        None => true,
        Some((_, state, _, _)) => state == "Z" || state == "X",
    }
}

/// The live processes working in `dir` or below it, with their command
/// lines: what a host started there and left behind, whoever its parent is
/// now (init, after the host died). A process's working folder is
/// inherited by everything it starts, unlike its environment, which hosts
/// filter.
pub fn working_in(dir: &std::path::Path) -> Vec<(u32, String)> {
    processes()
        .into_iter()
        .filter(|(pid, _, _)| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
        })
        .map(|(pid, _, _)| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (pid, cmdline.trim_end().to_owned())
        })
        .collect()
}
