//! What the fault suites (`tests/tests/faults_*.rs`) share: a lock that
//! makes their heavy tests take turns, seeded randomness, readings of the
//! daemon and the machine, and the scripted human's answers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{Event, Shown, TestFrontend};
pub use crate::{history, list_forms};
use elicit_proto::dbus::{BUS_NAME, Dict, SESSION_PREFIX};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use zbus::{MatchRule, MessageStream};

/// One test at a time (see the module comment).
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A form with one required text field, asking `message`.
pub fn name_form(message: &str) -> String {
    json!({"message": message, "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}})
    .to_string()
}

/// Splitmix64: small, seedable, good enough to pick fault points, and
/// printed so that a failing run can be repeated exactly.
pub struct Rng(pub u64);

impl Rng {
    /// The next number (splitmix64).
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// `FAULTS_SEED` when set (to repeat a run), else the clock.
pub fn seed() -> u64 {
    std::env::var("FAULTS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        })
}

/// The daemon's unique name and pid, as the bus knows them.
pub async fn daemon_identity(conn: &zbus::Connection) -> (String, u32) {
    let dbus = zbus::fdo::DBusProxy::new(conn).await.expect("dbus proxy");
    let name = zbus::names::BusName::try_from(BUS_NAME).expect("name");
    let owner = dbus.get_name_owner(name.clone()).await.expect("owner");
    let pid = dbus.get_connection_unix_process_id(name).await.expect("pid");
    (owner.to_string(), pid)
}

/// Resident memory of `pid` in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The one-minute load average per online core.
pub fn load_per_core() -> f64 {
    let load: f64 = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().and_then(|f| f.parse().ok()))
        .unwrap_or(0.0);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    load / cores as f64
}

/// CPU time of `pid` so far, in clock ticks (user + system; 100 a second).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |n: usize| fields.get(n).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of stat(5); 12 and 13 here.
    field(11) + field(12)
}

/// The form id at the end of a request path.
pub fn form_of(path: &str) -> String {
    path.rsplit('/').next().unwrap_or_default().to_owned()
}

/// The `p` quantile (0 to 1) of `samples`.
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}

/// `d` in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Every `Response` signal a connection receives, by request path, in
/// arrival order: (action, content JSON). Counted beside the client
/// library, which deduplicates, so that a second Response is seen.
pub type Responses = Arc<Mutex<HashMap<String, Vec<(String, String)>>>>;

/// Records every `Response` signal `conn` receives into `into`.
pub async fn record_responses(conn: &zbus::Connection, into: Responses) -> JoinHandle<()> {
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface("dev.elicitd.Request1")
        .expect("iface")
        .member("Response")
        .expect("member")
        .path_namespace(SESSION_PREFIX)
        .expect("namespace")
        .build();
    let mut stream = MessageStream::for_match_rule(rule, conn, Some(4096))
        .await
        .expect("match");
    tokio::spawn(async move {
        while let Some(Ok(message)) = stream.next().await {
            let Some(path) = message.header().path().map(|p| p.to_string()) else {
                continue;
            };
            if let Ok((action, content, _)) = message.body().deserialize::<(String, String, Dict)>() {
                into.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(path)
                    .or_default()
                    .push((action, content));
            }
        }
    })
}

/// Answers every shown form for which `content` gives an answer, until
/// aborted; counts successful answers per form id.
pub fn answer_shown(
    mut frontend: TestFrontend,
    content: impl Fn(&Shown) -> Option<Value> + Send + 'static,
    applied: Arc<Mutex<HashMap<String, usize>>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            // A short wait, not `next`'s deadline: idling is fine here.
            let Ok(event) = tokio::time::timeout(Duration::from_secs(1), frontend.next()).await else {
                continue;
            };
            let Event::Show(shown) = event else { continue };
            let Some(answer) = content(&shown) else { continue };
            if frontend.answer(&shown, "accept", answer).await.is_ok() {
                *applied
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(shown.form.clone())
                    .or_default() += 1;
            }
        }
    })
}

/// The answer the scripted human gives to a form asking `message`.
pub fn answer_for(message: &str) -> Value {
    json!({"name": format!("answer to {message}")})
}
