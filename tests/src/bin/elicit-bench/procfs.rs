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
    threads_of(pid, wanted)
        .map(|task| {
            let status = std::fs::read_to_string(task.join("status")).unwrap_or_default();
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

/// The /proc/PID/task/TID folders of the threads of `pid` whose name
/// (`comm`) `wanted` accepts; none once the process is gone.
fn threads_of(pid: u32, wanted: impl Fn(&str) -> bool) -> impl Iterator<Item = std::path::PathBuf> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|task| task.path())
        .filter(move |task| {
            let name = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
            wanted(name.trim())
        })
}

/// Resident memory backed by files (the binary and its libraries), in MiB.
pub fn file_rss_mib(pid: u32) -> f64 {
    status_mib(pid, "RssFile:")
}

/// CPU time used so far by the threads of `pid` whose name `wanted`
/// accepts: the scheduler's nanosecond count (`se.sum_exec_runtime` of
/// /proc/PID/task/TID/sched) where the kernel keeps it, else the 10 ms
/// ticks of `utime` + `stime`.
pub fn cpu_time_of(pid: u32, wanted: impl Fn(&str) -> bool) -> std::time::Duration {
    threads_of(pid, wanted).map(|task| thread_cpu_time(&task)).sum()
}

/// One thread's CPU time; see [`cpu_time_of`].
fn thread_cpu_time(task: &std::path::Path) -> std::time::Duration {
    let sched = std::fs::read_to_string(task.join("sched")).unwrap_or_default();
    if let Some(runtime) = sched_runtime(&sched) {
        return runtime;
    }
    let stat = std::fs::read_to_string(task.join("stat")).unwrap_or_default();
    std::time::Duration::from_millis(stat_ticks(&stat) * 10)
}

/// `se.sum_exec_runtime` (milliseconds, with nanoseconds) of a
/// /proc/…/sched text.
fn sched_runtime(sched: &str) -> Option<std::time::Duration> {
    sched.lines().find_map(|line| {
        let value = line.strip_prefix("se.sum_exec_runtime")?;
        let ms = value.trim().trim_start_matches(':').trim().parse::<f64>().ok()?;
        Some(std::time::Duration::from_secs_f64(ms / 1000.0))
    })
}

/// `utime` + `stime` of a /proc/…/stat line, in clock ticks. The command
/// name in parentheses may hold spaces and parentheses, so the fields are
/// counted from its last `)`: state is the first after it, utime the 12th.
fn stat_ticks(stat: &str) -> u64 {
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{sched_runtime, stat_ticks};

    #[test]
    fn the_scheduler_s_runtime_is_read_in_nanoseconds() {
        let sched = "head (24132, #threads: 1)\n---\nse.exec_start   :   46016778.020563\nse.sum_exec_runtime   :   1.013458\n";
        assert_eq!(sched_runtime(sched), Some(Duration::from_nanos(1_013_458)));
        assert_eq!(sched_runtime("se.vruntime : 3.0\n"), None);
    }

    #[test]
    fn ticks_are_counted_after_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (tokio (rt) w) S 1 4242 4242 0 -1 4194560 300 0 0 0 17 5 0 0 20 0 4 0 100 0 0";
        assert_eq!(stat_ticks(stat), 22);
        assert_eq!(stat_ticks(""), 0);
    }
}
