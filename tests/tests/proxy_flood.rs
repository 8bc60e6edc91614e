//! A host that floods a server which does not read: the proxy holds the
//! host back instead of buffering without end, and once the server reads
//! again every line arrives, whole and in order.
//!
//! Before the proxy's queues were bounded, this host grew one proxy from
//! 0.9 to 3.2 GB in 10 s.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use elicit_tests::{PrivateBus, binary, within};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::time::Instant;

/// How long the host floods the stalled server.
const FLOOD: Duration = Duration::from_secs(10);

/// The most resident memory the proxy may use meanwhile.
const RSS_LIMIT_KB: u64 = 64 * 1024;

/// One JSON-RPC notification, padded to about 1 KiB, numbered `n`, with
/// its newline.
fn line(n: u64) -> Vec<u8> {
    let pad = "x".repeat(960);
    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/flood\",\"params\":{{\"n\":{n},\"pad\":\"{pad}\"}}}}\n")
        .into_bytes()
}

/// The resident set of process `pid`, in KiB.
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The FIFO the server waits on; opened when dropped too, so that a
/// failing test does not leave the server waiting with the test's output.
struct Gate(PathBuf);

impl Gate {
    fn open(&self) -> std::io::Result<()> {
        // Non-blocking: with no server left to read it, opening fails
        // (ENXIO) instead of waiting for one.
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&self.0)?
            .write_all(b"go\n")
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self.open();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_flooding_a_server_that_never_reads_is_held_back() {
    let bus = PrivateBus::start();
    let dir = bus.dir();
    let gate = Gate(dir.join("gate"));
    let received = dir.join("received");
    let status = std::process::Command::new("mkfifo")
        .arg(&gate.0)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", gate.0.display());
    // The server reads nothing until the gate opens, then everything. Not
    // `exec cat > FILE`: that would close the server's output, which the
    // proxy takes for the server ending.
    let script = format!(
        "read -r _ < '{}'; cat > '{}'",
        gate.0.display(),
        received.display()
    );
    let mut proxy = Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "proxy", "--", "sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit proxy starts");
    let pid = proxy.id().expect("pid");
    let mut stdin = proxy.stdin.take().expect("stdin");

    // Flood for FLOOD, sampling the proxy's memory as it goes. `write` is
    // cancel-safe: a write cut off by the deadline wrote nothing, so the
    // offset says exactly what the proxy got.
    let deadline = Instant::now() + FLOOD;
    let mut sent = 0u64;
    let mut offset = 0usize;
    let mut current = line(0);
    let mut peak = 0u64;
    let mut next_sample = Instant::now();
    loop {
        if Instant::now() >= next_sample {
            peak = peak.max(rss_kb(pid).unwrap_or(0));
            next_sample = Instant::now() + Duration::from_millis(100);
        }
        let until = deadline.min(next_sample);
        match tokio::time::timeout_at(until, stdin.write(&current[offset..])).await {
            Ok(Ok(n)) => {
                offset += n;
                if offset == current.len() {
                    sent += 1;
                    current = line(sent);
                    offset = 0;
                }
            }
            Ok(Err(error)) => panic!("the proxy stopped reading the host: {error}"),
            Err(_) if Instant::now() >= deadline => break,
            Err(_) => {}
        }
    }
    peak = peak.max(rss_kb(pid).unwrap_or(0));
    println!(
        "proxy flood: {sent} lines (~{} KiB) taken in {FLOOD:?} from a host whose server read nothing; \
         peak proxy RSS {peak} KiB (limit {RSS_LIMIT_KB} KiB)",
        sent * current.len() as u64 / 1024
    );
    assert!(peak > 0, "the proxy's memory could not be read");
    assert!(
        peak < RSS_LIMIT_KB,
        "the proxy grew to {peak} KiB while its server read nothing"
    );

    // The server reads again: the rest of the cut line, then the end.
    gate.open().expect("open the gate");
    within(
        "the host's last line to be taken",
        stdin.write_all(&current[offset..]),
    )
    .await
    .expect("write");
    // The lines written whole, and the one finished just now.
    let whole = sent + 1;
    drop(stdin);
    let exit = within("the proxy to end with its server", proxy.wait())
        .await
        .expect("wait");
    assert!(exit.success(), "the proxy exited with {exit:?}");

    let text = std::fs::read(&received).expect("what the server received");
    let lines: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    for (n, got) in lines.iter().enumerate() {
        assert!(
            *got == line(n as u64).as_slice(),
            "line {n} of {whole} arrived out of order or changed: {}",
            String::from_utf8_lossy(&got[..got.len().min(80)])
        );
    }
    assert_eq!(lines.len() as u64, whole, "every line arrived, none twice");
}
