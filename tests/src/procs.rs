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

/// The environment variable whose value marks every process of one tree:
/// set on the command a test starts, it is inherited by everything that
/// command starts, whatever group or session it moves to.
pub const TREE_MARKER: &str = "ELICIT_TEST_TREE";

/// The live processes whose environment holds `TREE_MARKER=marker`.
pub fn marked(marker: &str) -> Vec<u32> {
    let needle = format!("{TREE_MARKER}={marker}");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| !exited(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|entry| entry == needle.as_bytes()))
        })
        .collect()
}

/// Waits until no process is marked `marker`, for at most `limit`; how
/// long that took, or the processes still there.
pub async fn all_gone(marker: &str, limit: std::time::Duration) -> Result<std::time::Duration, Vec<u32>> {
    let start = std::time::Instant::now();
    loop {
        let left = marked(marker);
        if left.is_empty() {
            return Ok(start.elapsed());
        }
        if start.elapsed() > limit {
            return Err(left);
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// Sends SIGTERM to `pid` and waits for it to exit, for at most `limit`;
/// how long that took, or a panic naming `what` still running.
pub async fn terminated_within(pid: u32, limit: std::time::Duration, what: &str) -> std::time::Duration {
    kill("-TERM", pid);
    let sent = std::time::Instant::now();
    while !exited(pid) {
        assert!(
            sent.elapsed() < limit,
            "{what} still runs {limit:?} after SIGTERM"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    sent.elapsed()
}

/// Sends `signal` to `pid`, which may have exited already.
pub fn signal(signal: &str, pid: u32) {
    let _ = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status();
}

/// The server processes `elicit proxy` (pid `proxy`) started: the
/// children of its warden (the `elicit` binary again, with
/// `__elicit-proxy-warden` as its first argument; see
/// elicit_proxy::warden), or its own children where it has none. A child
/// that runs the proxy's own binary but is not the warden yet (forked, not
/// yet executed) is not counted.
pub fn servers_of(proxy: u32) -> Vec<u32> {
    let exe = |pid: u32| std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let proxy_exe = exe(proxy);
    children_of(proxy)
        .into_iter()
        .flat_map(|child| {
            let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            let warden = cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == b"__elicit-proxy-warden");
            if warden {
                children_of(child)
            } else if proxy_exe.is_some() && exe(child) == proxy_exe {
                Vec::new()
            } else {
                vec![child]
            }
        })
        .collect()
}
