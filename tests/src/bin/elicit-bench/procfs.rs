//! What /proc tells about a process: its memory and how often it woke.

/// A `kB` field of /proc/PID/status, in MiB.
fn status_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| {
            line.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

/// Resident memory now, in MiB.
pub fn rss_mib(pid: u32) -> f64 {
    status_mib(pid, "VmRSS:")
}

/// The most resident memory so far, in MiB.
pub fn peak_rss_mib(pid: u32) -> f64 {
    status_mib(pid, "VmHWM:")
}

/// Context switches of every thread so far: each is the thread going to
/// sleep or being woken, so the growth of this count is the wake-ups.
pub fn context_switches(pid: u32) -> u64 {
    context_switches_of(pid, |_| true)
}

/// Context switches of the threads whose name `wanted` accepts.
pub fn context_switches_of(pid: u32, wanted: impl Fn(&str) -> bool) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .map(|task| {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            let name = status
                .lines()
                .find_map(|l| l.strip_prefix("Name:"))
                .unwrap_or("")
                .trim();
            if !wanted(name) {
                return 0;
            }
            status
                .lines()
                .filter(|l| {
                    l.starts_with("voluntary_ctxt_switches:") || l.starts_with("nonvoluntary_ctxt_switches:")
                })
                .filter_map(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}

/// Resident memory backed by files (the binary and its libraries), in MiB.
pub fn file_rss_mib(pid: u32) -> f64 {
    status_mib(pid, "RssFile:")
}
