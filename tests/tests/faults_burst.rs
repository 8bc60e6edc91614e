//! Fault suite: A burst of malformed D-Bus calls and JSON-RPC lines is refused clearly
//! while a well-behaved client keeps asking, and slows it down only within
//! a ratio measured in the same run.
//!
//! Its figures print with `cargo test -p elicit-tests --test faults_burst -- --nocapture`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use elicit_client::ClientSession;
use elicit_proto::dbus::{BUS_NAME, Broker1Proxy, Dict, Origin, OriginDict, SESSION_PREFIX};
use elicit_tests::faults::*;
use elicit_tests::{Daemon, PrivateBus, TestFrontend, binary, within};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use zbus::zvariant::{ObjectPath, Str};

/// A marker in every answer of the burst test: it must never reach the
/// daemon's log.
const SECRET: &str = "Zq9Vx-secret";

/// The scripted human's answer in the burst test.
fn secret_answer(message: &str) -> Value {
    json!({"name": format!("{SECRET} for {message}")})
}

/// One elicitation of the well-behaved client, submit to outcome.
async fn timed_ask(session: &mut ClientSession, n: usize) -> Duration {
    let message = format!("wb-{n}");
    let begun = Instant::now();
    let path = session
        .submit(&name_form(&message), None, None)
        .await
        .expect("submit");
    let outcome = within("the well-behaved client's answer", session.wait(&path))
        .await
        .expect("outcome");
    let took = begun.elapsed();
    assert_eq!(outcome.content, Some(secret_answer(&message)));
    took
}

/// `count` elicitations of the well-behaved client, timed.
async fn sample(session: &mut ClientSession, counter: &mut usize, count: usize) -> Vec<Duration> {
    let mut samples = Vec::new();
    for _ in 0..count {
        *counter += 1;
        samples.push(timed_ask(session, *counter).await);
    }
    samples
}

/// Elicitations of the well-behaved client, timed, until `done` holds
/// (checked after each, so at least one).
async fn sample_while_busy(
    session: &mut ClientSession,
    counter: &mut usize,
    mut done: impl FnMut() -> bool,
) -> Vec<Duration> {
    let mut samples = Vec::new();
    loop {
        *counter += 1;
        samples.push(timed_ask(session, *counter).await);
        if done() {
            return samples;
        }
    }
}

/// What the malformed calls aim at.
struct Targets {
    own_session: String,
    other_session: String,
    parked_form: String,
    parked_path: String,
    claimed_token: String,
}

/// One malformed call: its kind, the error name it must get, a phrase
/// the error text must hold, and the reply.
async fn malformed_call(
    conn: &zbus::Connection,
    t: &Targets,
    i: usize,
) -> (
    &'static str,
    &'static str,
    &'static str,
    zbus::Result<zbus::Message>,
) {
    const BROKER: &str = "dev.elicitd.Broker1";
    const SESSION: &str = "dev.elicitd.Session1";
    const REQUEST: &str = "dev.elicitd.Request1";
    let call = |path: String, iface: &'static str, method: &'static str| (path, iface, method);
    let broker = || call(elicit_proto::dbus::BROKER_PATH.to_owned(), BROKER, "Answer");
    macro_rules! send {
        ($target:expr, $body:expr) => {{
            let (path, iface, method) = $target;
            conn.call_method(Some(BUS_NAME), path.as_str(), Some(iface), method, $body)
                .await
        }};
    }
    if i % 100 == 99 {
        let big = json!({"message": "x".repeat(300 * 1024), "requestedSchema": {"type": "object", "properties": {}}});
        let reply = send!(
            call(t.own_session.clone(), SESSION, "Elicit"),
            &(big.to_string(), Dict::new())
        );
        return (
            "oversized request",
            "dev.elicitd.Error.InvalidRequest",
            "request-too-large",
            reply,
        );
    }
    match i % 16 {
        0 => (
            "wrong signature",
            "org.freedesktop.zbus.Error",
            "Signature mismatch: got `u`, expected `(ssss)`",
            send!(broker(), &(42u32,)),
        ),
        1 => (
            "request not JSON",
            "dev.elicitd.Error.InvalidRequest",
            "JSON",
            send!(
                call(t.own_session.clone(), SESSION, "Elicit"),
                &("{\"message\": \"truncated", Dict::new())
            ),
        ),
        2 => (
            "schema outside the subset",
            "dev.elicitd.Error.InvalidRequest",
            "nested-object",
            send!(
                call(t.own_session.clone(), SESSION, "Elicit"),
                &(
                    r#"{"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}}"#,
                    Dict::new()
                )
            ),
        ),
        3 => (
            "form id not a number",
            "dev.elicitd.Error.BadArgument",
            "is not a form id",
            send!(broker(), &("form-x", "t", "accept", "{}")),
        ),
        4 => (
            "unknown form",
            "dev.elicitd.Error.NotFound",
            "no form 9876543",
            send!(broker(), &(format!("9876543{i}"), "t", "accept", "{}")),
        ),
        5 => (
            "forged token",
            "dev.elicitd.Error.AccessDenied",
            "token",
            send!(broker(), &(t.parked_form.as_str(), "forged", "accept", "{}")),
        ),
        6 => (
            "unknown resume token",
            "dev.elicitd.Error.NotFound",
            "resume token",
            send!(
                call(
                    elicit_proto::dbus::BROKER_PATH.to_owned(),
                    BROKER,
                    "ResumeSession"
                ),
                &(format!("no-such-token-{i}"),)
            ),
        ),
        7 => (
            "submit on another client's session",
            "dev.elicitd.Error.AccessDenied",
            "another client",
            send!(
                call(t.other_session.clone(), SESSION, "Elicit"),
                &(name_form("intruder"), Dict::new())
            ),
        ),
        8 => (
            "close another client's session",
            "dev.elicitd.Error.AccessDenied",
            "another client",
            send!(call(t.other_session.clone(), SESSION, "Close"), &()),
        ),
        9 => (
            "close another client's form",
            "dev.elicitd.Error.AccessDenied",
            "another client",
            send!(call(t.parked_path.clone(), REQUEST, "Close"), &()),
        ),
        10 => (
            "unknown object",
            "org.freedesktop.DBus.Error.UnknownObject",
            "",
            send!(
                call(format!("{SESSION_PREFIX}/999999999"), SESSION, "Elicit"),
                &(name_form("nowhere"), Dict::new())
            ),
        ),
        11 => (
            "unknown method",
            "org.freedesktop.DBus.Error.UnknownMethod",
            "Frobnicate",
            send!(
                call(elicit_proto::dbus::BROKER_PATH.to_owned(), BROKER, "Frobnicate"),
                &()
            ),
        ),
        12 => {
            let mut options = Dict::new();
            options.insert("priority".into(), Str::from("high").into());
            let path = ObjectPath::from_static_str_unchecked("/x");
            (
                "option of the wrong type",
                "dev.elicitd.Error.BadArgument",
                "priority",
                send!(
                    call(
                        elicit_proto::dbus::BROKER_PATH.to_owned(),
                        BROKER,
                        "RegisterFrontend"
                    ),
                    &(path, options)
                ),
            )
        }
        13 => (
            "unknown action",
            "dev.elicitd.Error.BadArgument",
            "action must be",
            send!(
                broker(),
                &(t.parked_form.as_str(), t.claimed_token.as_str(), "maybe", "")
            ),
        ),
        14 => (
            "answer not JSON",
            "dev.elicitd.Error.BadArgument",
            "not JSON",
            send!(
                broker(),
                &(
                    t.parked_form.as_str(),
                    t.claimed_token.as_str(),
                    "accept",
                    format!("{{\"name\": \"{SECRET}")
                )
            ),
        ),
        _ => (
            "invalid answer",
            "dev.elicitd.Error.InvalidAnswer",
            "name",
            send!(
                broker(),
                &(
                    t.parked_form.as_str(),
                    t.claimed_token.as_str(),
                    "accept",
                    json!({"name": 5, SECRET: true}).to_string()
                )
            ),
        ),
    }
}

/// Tally of a burst: per kind, how many got the right error, and the
/// first few that did not.
#[derive(Default, Debug)]
struct Tally {
    right: BTreeMap<&'static str, usize>,
    example: BTreeMap<&'static str, String>,
    wrong: Vec<String>,
}

/// Sends `count` malformed calls from one connection, `depth` in flight,
/// in `segments` parts: each starts on a message from `go` and is reported
/// on `done`, so that quiet and busy windows of the measurement alternate.
async fn dbus_burst(
    address: String,
    targets_from: (String, String, String),
    count: usize,
    depth: usize,
    segments: usize,
    mut go: tokio::sync::mpsc::UnboundedReceiver<()>,
    done: tokio::sync::mpsc::UnboundedSender<()>,
) -> Tally {
    let conn = elicit_client::connect(Some(&address)).await.expect("connect");
    let broker = Broker1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy");
    let (own_session, _) = broker
        .open_session(Origin::default().to_dict())
        .await
        .expect("the attacker's own session");
    let (other_session, parked_form, parked_path) = targets_from;
    // A control client may claim a form; its token lets the bad answers
    // through the token check, so that their content is what is wrong.
    let (claimed_token, _, _) = broker.claim(&parked_form).await.expect("claim");
    let targets = Targets {
        own_session: own_session.to_string(),
        other_session,
        parked_form,
        parked_path,
        claimed_token,
    };
    let targets = &targets;
    let conn = &conn;
    let mut replies = Vec::new();
    let per_segment = count / segments;
    for segment in 0..segments {
        if go.recv().await.is_none() {
            break;
        }
        let calls = segment * per_segment..(segment + 1) * per_segment;
        let segment_replies: Vec<_> = futures_util::stream::iter(calls)
            .map(|i| malformed_call(conn, targets, i))
            .buffer_unordered(depth)
            .collect()
            .await;
        replies.extend(segment_replies);
        let _ = done.send(());
    }
    let mut tally = Tally::default();
    for (kind, name, phrase, reply) in replies {
        match reply {
            Err(zbus::Error::MethodError(got, text, _))
                if got.as_str() == name
                    && text
                        .as_deref()
                        .is_some_and(|t| t.contains(phrase) && !t.is_empty()) =>
            {
                *tally.right.entry(kind).or_default() += 1;
                tally
                    .example
                    .entry(kind)
                    .or_insert_with(|| format!("{got}: {:.120}", text.unwrap_or_default()));
            }
            other => {
                if tally.wrong.len() < 10 {
                    tally.wrong.push(format!("{kind}: {other:?}"));
                } else {
                    tally.wrong.push(String::new());
                }
            }
        }
    }
    tally
}

/// An MCP server for the proxy burst (standard library only): answers
/// every request (ping, unknown methods, bad params), and for
/// `tools/call ask` asks the user first and returns the answer.
const BURST_SERVER: &str = r#"
import json, sys
pending = {}
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if not isinstance(m, dict):
        continue
    if "method" not in m:
        rid = m.get("id")
        if isinstance(rid, str) and rid in pending:
            asked = pending.pop(rid)
            text = json.dumps(m.get("result"))
            send({"jsonrpc": "2.0", "id": asked, "result": {"content": [{"type": "text", "text": text}]}})
        continue
    if "id" not in m:
        continue
    rid, method, params = m["id"], m["method"], m.get("params")
    if method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/call" and isinstance(params, dict) and params.get("name") == "ask":
        eid = "e-" + str(rid)
        pending[eid] = rid
        send({"jsonrpc": "2.0", "id": eid, "method": "elicitation/create", "params": {
            "message": "proxy-" + str(rid),
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "params must name a tool"}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found: " + str(method)}})
"#;

/// One malformed host line: the line, and the id of the one reply it must
/// get (`None`: it gets none).
fn malformed_line(i: usize) -> (String, Option<Value>) {
    let with_id = |id: Value, line: String| (line, Some(id));
    match i % 10 {
        0 => (format!("garbage {i} \u{1} ]] not json"), None),
        1 => with_id(
            json!(format!("t{i}")),
            format!(r#"{{"jsonrpc":"2.0","id":"t{i}","method":"pin"#),
        ),
        2 => {
            // Beyond u64: the proxy and the host read it as a float.
            let id = format!("{i}000000000000000000000000000000");
            let parsed: Value = serde_json::from_str(&id).expect("a number");
            with_id(
                parsed,
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            )
        }
        3 => with_id(
            json!(format!("w{i}")),
            format!(r#"{{"jsonrpc":"2.0","id":"w{i}","method":42}}"#),
        ),
        4 => (
            format!(r#"{{"jsonrpc":"2.0","id":{{"x":{i}}},"method":"ping"}}"#),
            None,
        ),
        5 => with_id(
            json!(format!("u{i}")),
            format!(r#"{{"jsonrpc":"2.0","id":"u{i}","method":"no/such/method/{i}"}}"#),
        ),
        6 => (format!(r#"{{"jsonrpc":"2.0","id":"r{i}","result":{{}}}}"#), None),
        7 => with_id(
            json!(format!("p{i}")),
            format!(r#"{{"jsonrpc":"2.0","id":"p{i}","method":"tools/call","params":"ask"}}"#),
        ),
        8 => (format!(r#"[1, 2, {{"id": "a{i}"}}]"#), None),
        _ => {
            let id = format!("{}{i}", "h".repeat(2000));
            with_id(
                json!(id),
                format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#),
            )
        }
    }
}

/// The daemon's latency for a well-behaved client, quiet and during a
/// burst of 10 000 malformed D-Bus calls, then during 10 000 malformed
/// JSON-RPC lines through `elicit proxy` (with elicitations through the
/// proxy among them): every malformed call gets an error that names the
/// problem, nothing is lost, the daemon keeps serving within 2× its quiet
/// p50, its memory stays bounded, and its log holds no answer content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_malformed_calls_and_lines_is_refused_clearly_and_slows_no_one() {
    use std::sync::atomic::Ordering;
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    const BURST: usize = 10_000;
    // Calls in flight from the one attacking connection (FAULTS_DEPTH
    // overrides, to explore). The daemon answers one connection's calls in
    // order, so a call of the well-behaved client waits behind up to this
    // many refusals per hop.
    let depth: usize = std::env::var("FAULTS_DEPTH")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(4);
    const SEGMENTS: usize = 10;
    const QUIET_PER_SEGMENT: usize = 15;
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let observer = bus.connect().await;
    let (identity, pid) = daemon_identity(&observer).await;
    let frontend = TestFrontend::register(&bus, "script", 0).await;
    let applied: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let answerer = answer_shown(
        frontend,
        |shown| {
            let message = shown.request["message"].as_str()?;
            (message.starts_with("wb-") || message.starts_with("proxy-")).then(|| secret_answer(message))
        },
        applied.clone(),
    );

    // A bystander whose form stays on screen all along: the burst aims at it.
    let bystander_conn = bus.connect().await;
    let bystander = ClientSession::open(&bystander_conn, &Origin::default())
        .await
        .expect("open");
    let parked_path = bystander
        .submit(&name_form("parked"), None, None)
        .await
        .expect("submit");
    let parked_form = form_of(parked_path.as_str());

    let client_conn = bus.connect().await;
    let mut client = ClientSession::open(&client_conn, &Origin::default())
        .await
        .expect("open");
    let mut n = 0;
    sample(&mut client, &mut n, 20).await;
    let rss_before = rss_kib(pid);
    let cpu_before = cpu_ticks(pid);

    // The D-Bus burst, from its own thread and runtime, in segments with a
    // quiet window before each: the machine's background load drifts, and
    // alternating windows lets both figures see the same drift.
    let burst_begun = Instant::now();
    let (go, go_receiver) = tokio::sync::mpsc::unbounded_channel();
    let (done_sender, mut segment_done) = tokio::sync::mpsc::unbounded_channel();
    let attacker = {
        let address = bus.address().to_owned();
        let targets = (
            client.path().to_owned(),
            parked_form.clone(),
            parked_path.to_string(),
        );
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(dbus_burst(
                address,
                targets,
                BURST,
                depth,
                SEGMENTS,
                go_receiver,
                done_sender,
            ))
        })
    };
    let mut quiet_dbus = Vec::new();
    let mut during_dbus = Vec::new();
    let mut burst_time = Duration::ZERO;
    for _ in 0..SEGMENTS {
        quiet_dbus.extend(sample(&mut client, &mut n, QUIET_PER_SEGMENT).await);
        let begun = Instant::now();
        go.send(()).expect("the attacker listens");
        during_dbus.extend(sample_while_busy(&mut client, &mut n, || segment_done.try_recv().is_ok()).await);
        burst_time += begun.elapsed();
    }
    let tally = tokio::task::spawn_blocking(move || attacker.join())
        .await
        .expect("join")
        .expect("the attacker thread");
    let dbus_burst_took = burst_begun.elapsed();
    let cpu_after_dbus = cpu_ticks(pid);

    // The JSON-RPC burst through `elicit proxy`, with elicitations.
    let server = bus.dir().join("burst_server.py");
    std::fs::write(&server, BURST_SERVER).expect("server script");
    let mut proxy = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "proxy", "--", "python3"])
        .arg(&server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit proxy");
    let mut stdin = proxy.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(proxy.stdout.take().expect("stdout")).lines();
    let mut stderr = BufReader::new(proxy.stderr.take().expect("stderr")).lines();
    let stderr_lines = tokio::spawn(async move {
        let mut lines = Vec::new();
        while let Ok(Some(line)) = stderr.next_line().await {
            lines.push(line);
        }
        lines
    });
    let mut expected_replies: HashMap<String, usize> = HashMap::new();
    // The lines of each segment, and how many replies are due by its end.
    let mut chunks: Vec<(String, usize)> = Vec::new();
    let mut script = String::new();
    let mut due = 0;
    const ASKS: usize = 40;
    for i in 0..BURST {
        if i % (BURST / ASKS) == 0 {
            let k = i / (BURST / ASKS);
            script.push_str(&format!(
                r#"{{"jsonrpc":"2.0","id":"ask-{k}","method":"tools/call","params":{{"name":"ask"}}}}"#
            ));
            script.push('\n');
            *expected_replies
                .entry(json!(format!("ask-{k}")).to_string())
                .or_default() += 1;
            due += 1;
        }
        let (line, id) = malformed_line(i);
        script.push_str(&line);
        script.push('\n');
        if let Some(id) = id {
            *expected_replies.entry(id.to_string()).or_default() += 1;
            due += 1;
        }
        if (i + 1) % (BURST / SEGMENTS) == 0 {
            chunks.push((std::mem::take(&mut script), due));
        }
    }
    let replies_wanted: usize = expected_replies.values().sum();
    let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let proxy_begun = Instant::now();
    let progress: Arc<Mutex<Vec<Value>>> = Arc::default();
    let reader = {
        let received = received.clone();
        let progress = progress.clone();
        tokio::spawn(async move {
            let mut count = 0;
            while count < replies_wanted {
                let Ok(Some(line)) = stdout.next_line().await else {
                    break;
                };
                let reply =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:.200}"));
                progress.lock().unwrap().push(reply);
                count += 1;
                received.store(count, Ordering::SeqCst);
            }
        })
    };
    let (lines, mut to_write) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(chunk) = to_write.recv().await {
            stdin.write_all(chunk.as_bytes()).await.expect("write");
            stdin.flush().await.expect("flush");
        }
        stdin
    });
    let mut quiet_proxy = Vec::new();
    let mut during_proxy = Vec::new();
    let mut proxy_time = Duration::ZERO;
    for (chunk, due) in chunks {
        quiet_proxy.extend(sample(&mut client, &mut n, QUIET_PER_SEGMENT).await);
        let begun = Instant::now();
        lines.send(chunk).expect("the writer listens");
        let deadline = Instant::now() + elicit_tests::DEADLINE;
        during_proxy.extend(
            sample_while_busy(&mut client, &mut n, || {
                received.load(Ordering::SeqCst) >= due || Instant::now() > deadline
            })
            .await,
        );
        proxy_time += begun.elapsed();
    }
    drop(lines);
    if tokio::time::timeout(elicit_tests::DEADLINE, reader)
        .await
        .is_err()
    {
        let got = progress.lock().unwrap();
        let asks: Vec<&Value> = got
            .iter()
            .filter(|r| r["id"].as_str().is_some_and(|i| i.starts_with("ask-")))
            .collect();
        let seen: HashSet<String> = got.iter().map(|r| r["id"].to_string()).collect();
        let missing: Vec<String> = expected_replies
            .keys()
            .filter(|id| !seen.contains(*id))
            .map(|id| format!("{id:.40}"))
            .take(20)
            .collect();
        panic!(
            "timed out with {} of {replies_wanted} replies through the proxy ({} asks answered); missing: {missing:?}",
            got.len(),
            asks.len(),
        );
    }
    let replies = std::mem::take(&mut *progress.lock().unwrap());
    let _ = proxy_begun;
    drop(writer.await.expect("writer"));
    within("the proxy to exit", proxy.wait()).await.expect("exit");
    let stderr_lines = stderr_lines.await.expect("stderr");

    // Every line with an id got exactly its one reply, and each error says
    // what was wrong.
    let mut got: HashMap<String, usize> = HashMap::new();
    let mut unclear = Vec::new();
    let mut asks_answered = 0;
    for reply in &replies {
        let id = reply["id"].to_string();
        *got.entry(id.clone()).or_default() += 1;
        if id.starts_with("\"ask-") {
            let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
            if text.contains(SECRET) && text.contains("accept") {
                asks_answered += 1;
            }
            continue;
        }
        if let Some(error) = reply.get("error") {
            let message = error["message"].as_str().unwrap_or_default();
            let clear = match error["code"].as_i64() {
                Some(-32700) => message.contains("not JSON"),
                Some(-32600) => message.contains("not a JSON-RPC"),
                Some(-32601) => message.contains("method not found: no/such/method"),
                Some(-32602) => message.contains("params"),
                _ => false,
            };
            if !clear {
                unclear.push(reply.to_string());
            }
        }
    }
    let missing: Vec<_> = expected_replies
        .iter()
        .filter(|(id, n)| got.get(*id) != Some(n))
        .map(|(id, n)| format!("{id:.60}: wanted {n}, got {:?}", got.get(id)))
        .take(10)
        .collect();
    let unexpected: Vec<_> = got
        .keys()
        .filter(|id| !expected_replies.contains_key(*id))
        .take(10)
        .collect();
    let dropped = stderr_lines
        .iter()
        .filter(|l| l.contains("dropped a line"))
        .count();

    // Nothing lost: the bystander's form is still there, claimed, and the
    // daemon is the same process, its memory bounded.
    let forms = list_forms(&observer).await;
    let rss_after = rss_kib(pid);
    let (identity_after, _) = daemon_identity(&observer).await;
    answerer.abort();

    let figures = |samples: &[Duration]| (percentile(samples, 0.5), percentile(samples, 0.99));
    let (qd50, qd99) = figures(&quiet_dbus);
    let (d50, d99) = figures(&during_dbus);
    let (qp50, qp99) = figures(&quiet_proxy);
    let (p50, p99) = figures(&during_proxy);
    let dbus_ratio = d50.as_secs_f64() / qd50.as_secs_f64();
    let proxy_ratio = p50.as_secs_f64() / qp50.as_secs_f64();
    let wrong = tally.wrong.len();
    println!(
        "faults: burst of {BURST} malformed D-Bus calls ({depth} in flight on one connection, {SEGMENTS} segments) \
         took {:.2} s of {:.2} s, the daemon {:.2} ms CPU per call: {} refused with the right error, {wrong} not",
        burst_time.as_secs_f64(),
        dbus_burst_took.as_secs_f64(),
        (cpu_after_dbus - cpu_before) as f64 * 10.0 / BURST as f64,
        tally.right.values().sum::<usize>(),
    );
    for (kind, count) in &tally.right {
        println!("    {count:5} × {kind:36} e.g. {}", tally.example[kind]);
    }
    println!(
        "faults: burst of {BURST} malformed JSON-RPC lines (+{ASKS} elicitations) through elicit proxy took {:.2} s: \
         {} replies, {dropped} refused lines named on stderr, {asks_answered}/{ASKS} elicitations answered",
        proxy_time.as_secs_f64(),
        replies.len(),
    );
    println!(
        "faults: well-behaved client, submit → answer → outcome, p50/p99 (samples): \
         D-Bus burst: quiet {:.2}/{:.2} ms ({}), during {:.2}/{:.2} ms ({}), p50 ratio {dbus_ratio:.2}; \
         proxy burst: quiet {:.2}/{:.2} ms ({}), during {:.2}/{:.2} ms ({}), p50 ratio {proxy_ratio:.2}",
        ms(qd50),
        ms(qd99),
        quiet_dbus.len(),
        ms(d50),
        ms(d99),
        during_dbus.len(),
        ms(qp50),
        ms(qp99),
        quiet_proxy.len(),
        ms(p50),
        ms(p99),
        during_proxy.len(),
    );
    println!(
        "faults: daemon RSS {rss_before} KiB before the bursts, {rss_after} KiB after; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        tally.wrong.is_empty(),
        "malformed calls without a clear error: {:#?}",
        tally.wrong
    );
    assert_eq!(tally.right.values().sum::<usize>(), BURST);
    assert!(missing.is_empty(), "lines without their one reply: {missing:#?}");
    assert!(unexpected.is_empty(), "replies nobody asked for: {unexpected:?}");
    assert!(
        unclear.is_empty(),
        "unclear errors: {:#?}",
        &unclear[..unclear.len().min(5)]
    );
    // Garbage, truncated JSON, wrong types, ids of the wrong type and
    // batches: each refused line is named on stderr, with or without an id.
    assert_eq!(dropped, BURST / 2, "each refused line is named on stderr");
    assert_eq!(asks_answered, ASKS);
    assert_eq!(forms.len(), 1, "only the bystander's form is left: {forms:?}");
    assert_eq!(forms[0]["id"].to_string(), parked_form);
    assert_eq!(forms[0]["state"], "presented");
    assert_eq!(identity_after, identity, "the daemon never restarted");
    assert!(
        rss_after < rss_before + 32 * 1024,
        "daemon memory grew from {rss_before} to {rss_after} KiB"
    );
    assert!(
        !daemon.log().contains(SECRET),
        "the daemon's log holds answer content"
    );
    // Speed is measured, not asserted (the project's rule: a shared 2-core
    // machine under other builds stretches every latency, so a fixed bound
    // here would fail for reasons outside the daemon). The well-behaved
    // client's figures during the burst, against its quiet ones measured
    // in the same run, are printed for the record; the goal is 2×.
    let load = load_per_core();
    println!(
        "\nfaults: well-behaved client p50 during the burst / quiet: D-Bus {dbus_ratio:.2}, \
         proxy {proxy_ratio:.2} (goal ≤ 2.0; load {load:.1} runnable threads per core)\n"
    );
    drop(bystander);
}
