//! Issue 28, item 7: at `ELICITD_LOG=trace` no outside text reaches the
//! log raw (zbus's own spans and message traces included), and what one
//! request can make the daemon log is bounded.

use std::sync::Arc;

use elicit_proto::dbus::{Broker1Proxy, Dict, Session1Proxy};
use elicit_tests::{Daemon, PrivateBus, eventually};
use zbus::zvariant::{OwnedValue, Str};

/// ESC (an OSC title), BEL, a C1 CSI, a bidi override, and a newline that
/// would start a forged log line.
const HOSTILE: &str = "x\u{1b}]0;pwned\u{7}y\u{9b}2J\u{202e}dlrow\n2026-01-01T00:00:00Z ERROR forged";

fn origin(value: &str) -> Dict {
    [
        "server",
        "host",
        "cwd",
        "command",
        "server-version",
        "icon",
        "unknown-key",
    ]
    .into_iter()
    .map(|k| (k.to_owned(), OwnedValue::from(Str::from(value.to_owned()))))
    .collect()
}

/// The first raw control character (or bidi override) in `log`, if any;
/// tabs never occur in the daemon's lines, and each line ends in `\n`.
fn raw_control(log: &str) -> Option<(usize, char)> {
    log.char_indices().find(|(_, c)| {
        *c != '\n'
            && (c.is_control()
                || matches!(*c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_log_holds_no_raw_control_character_and_is_bounded() {
    let bus = PrivateBus::start_with(
        r#"<limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">1000000000</limit>"#,
    );
    let socket = bus.dir().join("runtime/elicitd/agents.sock");
    let socket_env = socket.display().to_string();
    let daemon = Daemon::start_with_env(
        &bus,
        "",
        &[
            ("ELICITD_LOG", Some("trace")),
            ("ELICITD_ASKER_SOCKET", Some(&socket_env)),
        ],
    )
    .await;
    eventually("the asker socket", || std::future::ready(socket.exists())).await;
    let address = format!("{}{}", elicit_client::ASKER_ADDRESS_PREFIX, socket.display());
    let on_bus = bus.connect().await;
    let on_socket = elicit_client::connect(Some(&address)).await.expect("socket");
    for conn in [&on_bus, &on_socket] {
        let broker = Broker1Proxy::new(conn).await.expect("proxy");
        let (path, _token) = broker.open_session(origin(HOSTILE)).await.expect("session");
        let session = Session1Proxy::builder(conn)
            .path(path)
            .expect("path")
            .build()
            .await
            .expect("session proxy");
        let request = serde_json::json!({
            "message": HOSTILE,
            "requestedSchema": {"type": "object", "properties": {"a": {"type": "string", "title": HOSTILE}}},
        });
        let mut options = Dict::new();
        options.insert("submission-id".into(), OwnedValue::from(Str::from(HOSTILE)));
        session
            .elicit(&request.to_string(), options)
            .await
            .expect("queued");
        // Refusals carry the text back, and are logged too.
        let too_long = format!("{HOSTILE}{}", "z".repeat(300));
        assert!(broker.open_session(origin(&too_long)).await.is_err());
        assert!(broker.resume_session(HOSTILE).await.is_err());
    }
    let before = daemon.log().len();
    eventually("the forms were traced", || {
        std::future::ready(daemon.log().matches("pwned").count() >= 4)
    })
    .await;

    // Two calls of 60 MiB, one a key of hostile text: what the daemon logs
    // for them is bounded, at trace.
    let big: Arc<str> = Arc::from(HOSTILE.repeat(15 * 1024 * 1024 / HOSTILE.len()));
    let mut huge = Dict::new();
    for key in ["server", "host", "cwd", HOSTILE] {
        huge.insert(key.into(), OwnedValue::from(Str::from(big.clone())));
    }
    for conn in [&on_bus, &on_socket] {
        let broker = Broker1Proxy::new(conn).await.expect("proxy");
        let error = broker
            .open_session(huge.clone())
            .await
            .expect_err("too large")
            .to_string();
        assert!(error.contains("origin field 'server'"), "{error}");
    }
    let log = daemon.log();
    let grown = log.len() - before;
    eprintln!("the trace log grew {grown} bytes for two 60 MiB calls and the forms before them");
    assert!(grown < 1024 * 1024, "the log grew {grown} bytes");
    if let Some((at, c)) = raw_control(&log) {
        let before: Vec<char> = log[..at].chars().rev().take(200).collect();
        let before: String = before.into_iter().rev().collect();
        panic!("a raw {c:?} at byte {at}, after: {before:?}");
    }
    assert!(
        log.contains("\\u{1b}]0;pwned\\u{7}"),
        "the escaped text is in the log"
    );
}
