//! Issue 28, item 2: a remote agent (or any client) cannot exhaust the
//! daemon. Eight sessions with four 15 MiB origin strings each, through the
//! asker socket and over the bus, are all refused naming the fields; the
//! daemon's peak RSS stays under 64 MiB, and while the attack runs
//! `elicit list`, a property read and SIGTERM each take under a second.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use elicit_proto::dbus::{Broker1Proxy, Dict};
use elicit_tests::{Daemon, PrivateBus, binary, eventually};
use zbus::zvariant::{OwnedValue, Str};

/// The session bus's own limits (Debian's `session.conf`): a 60 MiB call
/// gets through to the daemon, as on a real desktop.
const SESSION_LIMITS: &str = r#"<limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">1000000000</limit>"#;

const SESSIONS: usize = 8;
const STRING: usize = 15 * 1024 * 1024;
const MAX_RSS_KIB: u64 = 64 * 1024;

/// One of the attack's origins: four 15 MiB strings, shared by every
/// attacker (only the serialised calls are per attacker).
fn huge_origin() -> Dict {
    let big: Arc<str> = Arc::from("A".repeat(STRING));
    let mut origin = Dict::new();
    for key in ["server", "host", "cwd", "command"] {
        origin.insert(key.into(), OwnedValue::from(Str::from(big.clone())));
    }
    origin
}

fn asker_address(socket: &Path) -> String {
    format!("{}{}", elicit_client::ASKER_ADDRESS_PREFIX, socket.display())
}

async fn system(config: &str, env: &[(&str, Option<&str>)]) -> (PrivateBus, Daemon, PathBuf) {
    let bus = PrivateBus::start_with(SESSION_LIMITS);
    let socket = bus.dir().join("runtime/elicitd/agents.sock");
    let socket_env = socket.display().to_string();
    let mut env = env.to_vec();
    env.push(("ELICITD_ASKER_SOCKET", Some(&socket_env)));
    let daemon = Daemon::start_with_env(&bus, config, &env).await;
    eventually("the asker socket", || std::future::ready(socket.exists())).await;
    (bus, daemon, socket)
}

/// VmHWM and VmRSS of `pid`, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/{pid}/status"))
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The refusals of each field the attack sent, as the daemon words them.
fn assert_names_every_field(error: &str) {
    for key in ["server", "host", "cwd", "command"] {
        assert!(
            error.contains(&format!(
                "origin field '{key}' is {STRING} bytes, more than the limit of"
            )),
            "{key} not named: {error}"
        );
    }
}

/// Which way in the attack takes.
#[derive(Clone, Copy, Debug)]
enum Way {
    AskerSocket,
    Bus,
}

/// Runs the attack until `stop`, counting the refusals; every answer must
/// be a refusal naming the four fields.
async fn attack(way: Way, bus: String, socket: PathBuf, stop: Arc<AtomicBool>, refused: Arc<AtomicUsize>) {
    let origin = huge_origin();
    let mut attackers = Vec::new();
    for _ in 0..SESSIONS {
        let address = match way {
            Way::AskerSocket => asker_address(&socket),
            Way::Bus => bus.clone(),
        };
        let (origin, stop, refused) = (origin.clone(), stop.clone(), refused.clone());
        attackers.push(tokio::spawn(async move {
            let conn = elicit_client::connect(Some(&address))
                .await
                .expect("attacker connects");
            let broker = Broker1Proxy::new(&conn).await.expect("proxy");
            loop {
                let answer = broker.open_session(origin.clone()).await;
                let error = answer.expect_err("a 60 MiB origin must be refused").to_string();
                // A call cut short by the daemon's exit has no answer.
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                assert_names_every_field(&error);
                refused.fetch_add(1, Ordering::SeqCst);
                if stop.load(Ordering::SeqCst) {
                    break;
                }
            }
        }));
    }
    for attacker in attackers {
        attacker.await.expect("attacker");
    }
}

async fn the_attack_leaves_the_daemon_responsive(way: Way) {
    let (bus, mut daemon, socket) = system("", &[]).await;
    let pid = daemon.pid().expect("running");
    let observer = bus.connect().await;
    let broker = Broker1Proxy::new(&observer).await.expect("proxy");
    let (_, idle_rss) = memory_kib(pid);

    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicUsize::new(0));
    let attack = tokio::spawn(attack(
        way,
        bus.address().to_owned(),
        socket.clone(),
        stop.clone(),
        refused.clone(),
    ));
    // The measurements start once every attacker has had a refusal, and
    // while they all keep sending.
    eventually("a refusal for every attacker", || {
        std::future::ready(refused.load(Ordering::SeqCst) >= SESSIONS)
    })
    .await;

    let started = Instant::now();
    let listed = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "list", "--json"])
        .output()
        .await
        .expect("elicit list");
    let list_time = started.elapsed();
    assert!(
        listed.status.success(),
        "elicit list: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");

    let started = Instant::now();
    let sessions = broker.sessions().await.expect("Sessions property");
    let property_time = started.elapsed();
    assert_eq!(sessions, 0, "no session was opened");

    let (peak, rss) = memory_kib(pid);
    let during = refused.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    let sigterm_time = daemon.terminate().expect("the daemon exits on SIGTERM");
    // The attackers' calls fail once the daemon is gone; their task ends.
    let _ = attack.await;
    eprintln!(
        "{way:?}: {during} refusals of {} MiB calls before SIGTERM; idle RSS {idle_rss} KiB, \
         VmRSS {rss} KiB, VmHWM {peak} KiB; elicit list {list_time:?}, property {property_time:?}, \
         SIGTERM {sigterm_time:?}",
        (4 * STRING) >> 20
    );
    assert!(
        during >= SESSIONS,
        "only {during} calls were refused before SIGTERM"
    );
    assert!(peak < MAX_RSS_KIB, "peak RSS {peak} KiB");
    assert!(
        list_time < Duration::from_secs(1),
        "elicit list took {list_time:?}"
    );
    assert!(
        property_time < Duration::from_secs(1),
        "a property read took {property_time:?}"
    );
    assert!(
        sigterm_time < Duration::from_secs(1),
        "SIGTERM took {sigterm_time:?}"
    );
    // Nothing of the attack was stored.
    let stored: u64 = walk_size(daemon.state_dir());
    assert!(
        stored < 16 * 1024 * 1024,
        "the state directory holds {stored} bytes"
    );
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk_size(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_item_2_attack_through_the_asker_socket_is_refused_and_bounded() {
    the_attack_leaves_the_daemon_responsive(Way::AskerSocket).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_item_2_attack_over_the_bus_is_refused_and_bounded() {
    the_attack_leaves_the_daemon_responsive(Way::Bus).await;
}

fn origin_of(fields: &[(&str, String)]) -> Dict {
    fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), OwnedValue::from(Str::from(v.clone()))))
        .collect::<HashMap<_, _>>()
        .into_iter()
        .collect()
}

/// A field one byte past its bound is refused by name, on both ways in; at
/// its bound it is taken whole, not cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_origin_field_is_bounded_by_name_on_both_ways_in() {
    let (bus, _daemon, socket) = system("", &[]).await;
    let on_bus = bus.connect().await;
    let on_socket = elicit_client::connect(Some(&asker_address(&socket)))
        .await
        .expect("socket");
    for conn in [&on_bus, &on_socket] {
        let broker = Broker1Proxy::new(conn).await.expect("proxy");
        for (key, limit) in [("server", 256), ("host", 256), ("cwd", 4096), ("command", 4096)] {
            let error = broker
                .open_session(origin_of(&[(key, "x".repeat(limit + 1))]))
                .await
                .expect_err("one byte too long")
                .to_string();
            assert!(
                error.contains(&format!(
                    "origin field '{key}' is {} bytes, more than the limit of {limit}",
                    limit + 1
                )),
                "{error}"
            );
            broker
                .open_session(origin_of(&[(key, "x".repeat(limit))]))
                .await
                .expect("at the bound");
        }
    }
    let listed = elicit_tests::list_forms(&on_bus).await;
    assert!(listed.is_empty());
    let observer = Broker1Proxy::new(&on_bus).await.expect("proxy");
    assert_eq!(observer.sessions().await.expect("sessions"), 8);
}

/// More connections buy no more sessions: the limit is per uid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_limited_per_uid_across_connections() {
    let (bus, _daemon, socket) = system("[broker]\nsessions-per-uid = 4\n", &[]).await;
    let mut conns = Vec::new();
    for n in 0..4 {
        let conn = match n % 2 {
            0 => bus.connect().await,
            _ => elicit_client::connect(Some(&asker_address(&socket)))
                .await
                .expect("socket"),
        };
        let broker = Broker1Proxy::new(&conn).await.expect("proxy");
        broker.open_session(Dict::new()).await.expect("within the limit");
        conns.push(conn);
    }
    for conn in [
        bus.connect().await,
        elicit_client::connect(Some(&asker_address(&socket)))
            .await
            .expect("socket"),
    ] {
        let broker = Broker1Proxy::new(&conn).await.expect("proxy");
        let error = broker
            .open_session(Dict::new())
            .await
            .expect_err("a fifth session")
            .to_string();
        assert!(
            error.contains("4 sessions open (broker.sessions-per-uid)"),
            "{error}"
        );
    }
}
