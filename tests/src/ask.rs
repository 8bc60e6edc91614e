//! `elicit ask` as a script or agent runs it: the client side of the
//! front-end tests, whose printed JSON is what they assert.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::{PrivateBus, binary, within};

/// The naming options of `elicit ask` with the values the tests expect
/// to see wherever the origin is shown.
pub const ASKER_FLAGS: [&str; 6] = [
    "--server",
    "deployer",
    "--host",
    "release script",
    "--icon",
    "utilities-terminal",
];

/// Starts `elicit ask` with `schema` (or a URL) and returns the child.
pub fn ask(bus: &PrivateBus, message: &str, schema: &str, extra: &[&str]) -> tokio::process::Child {
    ask_reaching(
        bus,
        &[OsStr::new("--bus"), OsStr::new(bus.address())],
        message,
        schema,
        extra,
    )
}

/// [`ask`] through the asker socket at `socket` rather than the bus.
pub fn ask_through_socket(
    bus: &PrivateBus,
    socket: &Path,
    message: &str,
    schema: &str,
) -> tokio::process::Child {
    ask_reaching(
        bus,
        &[OsStr::new("--asker-socket"), socket.as_os_str()],
        message,
        schema,
        &[],
    )
}

/// `elicit ask` reaching the broker as `reach` says (its global options).
fn ask_reaching(
    bus: &PrivateBus,
    reach: &[&OsStr],
    message: &str,
    schema: &str,
    extra: &[&str],
) -> tokio::process::Child {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let file = bus
        .dir()
        .join(format!("schema-{}.json", NEXT.fetch_add(1, Ordering::SeqCst)));
    std::fs::write(&file, schema).expect("write schema");
    let mut command = tokio::process::Command::new(binary("elicit"));
    command.args(reach).args(["ask", "--message", message]);
    if schema.starts_with("https://") {
        command.args(["--url", schema]);
    } else {
        command.arg("--schema").arg(&file);
    }
    command
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit ask starts")
}

/// What `elicit ask` printed, parsed, and its exit code.
pub async fn printed(child: tokio::process::Child) -> (Value, Option<i32>) {
    let Output {
        status,
        stdout,
        stderr,
    } = within("elicit ask to finish", child.wait_with_output())
        .await
        .expect("elicit ask runs");
    let text = String::from_utf8_lossy(&stdout);
    let value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "elicit ask printed no JSON ({e}): {text:?}; stderr: {}",
            String::from_utf8_lossy(&stderr)
        )
    });
    (value, status.code())
}

/// The server name that `elicit ask` reports when this test process starts
/// it with no `--server`: the name of its parent, this process.
pub fn asker_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .expect("/proc/self/comm")
        .trim_end()
        .to_owned()
}
