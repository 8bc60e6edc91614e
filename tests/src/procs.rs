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
