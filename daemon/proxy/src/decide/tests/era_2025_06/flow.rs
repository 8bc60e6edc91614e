//! MCP 2025-06-18, the rest of the table: `--prefer host`, cancellation
//! from either side, keep-alives, URL mode, -32042, and lines that are
//! passed on or refused.

use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::*;

pub(super) fn rows() -> Vec<Row> {
    let broken: &'static [u8] = br#"{"id":3,"method":"x""#;
    let broken_error = serde_json::from_slice::<Value>(broken)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    let setup = || vec![Step::Host(init(json!({}))), Step::Server(elicit(5, form()))];
    let url_required = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": JsonRpcCode::URL_ELICITATION_REQUIRED,
        "message": "sign in first", "data": {"elicitations": [
            {"message": "Sign in", "url": "https://example.com/auth", "elicitationId": "e2"}]}}});
    vec![
        Row {
            name: "--prefer host, host declared form: forwarded as it came",
            config: with(|c| c.prefer = Prefer::Host),
            setup: vec![Step::Host(init(json!({"elicitation": {}})))],
            steps: vec![Step::Server(elicit(5, form()))],
            expect: vec![E::RawHost(elicit(5, form()))],
        },
        Row {
            name: "--prefer host, host declared url only: a form goes to the broker",
            config: with(|c| c.prefer = Prefer::Host),
            setup: vec![Step::Host(init(json!({"elicitation": {"url": {}}})))],
            steps: vec![Step::Server(elicit(5, form()))],
            expect: vec![E::Ask(1, form(), None), E::Start(1)],
        },
        Row {
            name: "the server cancels: the form is withdrawn, nothing answers",
            config: config(),
            setup: setup(),
            steps: vec![
                Step::Server(notification("notifications/cancelled", json!({"requestId": 5}))),
                Step::Reply(1, Reply::Withdrawn),
            ],
            expect: vec![E::Withdraw(1), E::Stop(1)],
        },
        Row {
            name: "the server cancels a form the host has: the host is told",
            config: with(|c| c.prefer = Prefer::Host),
            setup: vec![
                Step::Host(init(json!({"elicitation": {}}))),
                Step::Server(elicit(5, form())),
            ],
            steps: vec![Step::Server(notification(
                "notifications/cancelled",
                json!({"requestId": 5}),
            ))],
            expect: vec![E::RawHost(notification(
                "notifications/cancelled",
                json!({"requestId": 5}),
            ))],
        },
        Row {
            name: "the host cancels the only request: its form goes, the server gets cancel",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                // Answered: the initialize is no longer in flight.
                Step::Server(result(json!(0), json!({}))),
                Step::Host(call(2, json!({}))),
                Step::Server(elicit(5, form())),
            ],
            steps: vec![
                Step::Host(notification("notifications/cancelled", json!({"requestId": 2}))),
                Step::Reply(1, Reply::Withdrawn),
            ],
            expect: vec![
                E::Withdraw(1),
                E::RawServer(notification("notifications/cancelled", json!({"requestId": 2}))),
                E::Stop(1),
                E::Server(result(json!(5), json!({"action": "cancel"}))),
            ],
        },
        Row {
            name: "a form asked while two requests ran stays while one of them runs",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Server(result(json!(0), json!({}))),
                Step::Host(call(2, json!({}))),
                Step::Host(call(3, json!({}))),
                Step::Server(elicit(5, form())),
            ],
            steps: vec![Step::Host(notification(
                "notifications/cancelled",
                json!({"requestId": 2}),
            ))],
            expect: vec![E::RawServer(notification(
                "notifications/cancelled",
                json!({"requestId": 2}),
            ))],
        },
        Row {
            name: "both requests a form may serve cancelled: withdrawn at the last, the server gets cancel",
            config: config(),
            setup: two_calls_and_a_form(),
            steps: vec![
                Step::Host(cancelled(2)),
                Step::Host(cancelled(3)),
                Step::Reply(1, Reply::Withdrawn),
            ],
            expect: vec![
                E::RawServer(cancelled(2)),
                E::Withdraw(1),
                E::RawServer(cancelled(3)),
                E::Stop(1),
                E::Server(result(json!(5), json!({"action": "cancel"}))),
            ],
        },
        Row {
            name: "one request cancelled, the other answered: nobody is left, withdrawn",
            config: config(),
            setup: two_calls_and_a_form(),
            steps: vec![
                Step::Host(cancelled(3)),
                Step::Server(result(json!(2), json!({"content": []}))),
            ],
            expect: vec![
                E::RawServer(cancelled(3)),
                E::RawHost(result(json!(2), json!({"content": []}))),
                E::Withdraw(1),
            ],
        },
        Row {
            name: "the server answers the only request while its form waits: still the server's",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Server(result(json!(0), json!({}))),
                Step::Host(call(2, json!({}))),
                Step::Server(elicit(5, form())),
            ],
            steps: vec![Step::Server(result(json!(2), json!({"content": []})))],
            expect: vec![E::RawHost(result(json!(2), json!({"content": []})))],
        },
        Row {
            name: "a request that began after the form cannot own it",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Server(result(json!(0), json!({}))),
                Step::Host(call(2, json!({}))),
                Step::Server(elicit(5, form())),
                Step::Host(call(3, json!({}))),
            ],
            steps: vec![Step::Host(cancelled(2))],
            expect: vec![E::Withdraw(1), E::RawServer(cancelled(2))],
        },
        Row {
            name: "a form asked outside any request is nobody's: requests ending leave it",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Server(result(json!(0), json!({}))),
                Step::Server(elicit(5, form())),
                Step::Host(call(2, json!({}))),
            ],
            steps: vec![Step::Host(cancelled(2))],
            expect: vec![E::RawServer(cancelled(2))],
        },
        Row {
            name: "keep-alive: progress for every open request's token",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Host(call(2, json!({"progressToken": "p2"}))),
                Step::Server(elicit(5, form())),
            ],
            steps: vec![Step::Tick(1, 3)],
            expect: vec![E::Host(notification(
                "notifications/progress",
                json!({"progressToken": "p2", "progress": 3,
                       "message": "waiting for the user to answer a form (elicitd)"}),
            ))],
        },
        Row {
            name: "the host leaving withdraws the form",
            config: config(),
            setup: setup(),
            steps: vec![Step::HostLeft],
            expect: vec![E::Withdraw(1)],
        },
        Row {
            name: "URL mode: answered, and its complete notification is consumed",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Server(elicit(5, url_form("e1"))),
            ],
            steps: vec![
                Step::Reply(
                    1,
                    Reply::Answered {
                        action: "accept".into(),
                        content: None,
                    },
                ),
                Step::Server(notification(
                    "notifications/elicitation/complete",
                    json!({"elicitationId": "e1"}),
                )),
            ],
            expect: vec![
                E::Stop(1),
                E::Server(result(json!(5), json!({"action": "accept"}))),
            ],
        },
        Row {
            name: "a complete notification the proxy did not answer goes to the host",
            config: config(),
            setup: vec![Step::Host(init(json!({})))],
            steps: vec![Step::Server(notification(
                "notifications/elicitation/complete",
                json!({"elicitationId": "e9"}),
            ))],
            expect: vec![E::RawHost(notification(
                "notifications/elicitation/complete",
                json!({"elicitationId": "e9"}),
            ))],
        },
        Row {
            name: "-32042: its URL forms first (mode added), then the error to the host",
            config: config(),
            setup: vec![Step::Host(init(json!({}))), Step::Host(call(3, json!({})))],
            // The held error is 1, its form 2.
            steps: vec![
                Step::Server(url_required.clone()),
                Step::Reply(2, answered("accept")),
            ],
            expect: vec![
                E::Ask(
                    2,
                    json!({"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "elicitationId": "e2"}),
                    None,
                ),
                E::RawHost(url_required.clone()),
            ],
        },
        Row {
            name: "-32042 under --prefer host with a URL-capable host goes straight on",
            config: with(|c| c.prefer = Prefer::Host),
            setup: vec![
                Step::Host(init(json!({"elicitation": {"url": {}}}))),
                Step::Host(call(3, json!({}))),
            ],
            steps: vec![Step::Server(url_required.clone())],
            expect: vec![E::RawHost(url_required)],
        },
        Row {
            name: "a plain result travels byte for byte",
            config: config(),
            setup: vec![Step::Host(init(json!({}))), Step::Host(call(2, json!({})))],
            steps: vec![Step::Server(result(json!(2), json!({"content": []})))],
            expect: vec![E::RawHost(result(json!(2), json!({"content": []})))],
        },
        Row {
            name: "a broken line with an id gets a parse error back",
            config: config(),
            setup: vec![],
            steps: vec![Step::HostBytes(broken)],
            expect: vec![
                E::Say(format!(
                    "elicit proxy: dropped a line from the Host that is not JSON: {broken_error}"
                )),
                E::Host(error(
                    json!(3),
                    JsonRpcCode::PARSE_ERROR,
                    &format!("not JSON: {broken_error}"),
                )),
            ],
        },
    ]
}

/// The host's `notifications/cancelled` for its request `id`.
fn cancelled(id: i64) -> Value {
    notification("notifications/cancelled", json!({"requestId": id}))
}

/// Two tool calls running, and a form asked meanwhile (ask 1).
fn two_calls_and_a_form() -> Vec<Step> {
    vec![
        Step::Host(init(json!({}))),
        Step::Server(result(json!(0), json!({}))),
        Step::Host(call(2, json!({}))),
        Step::Host(call(3, json!({}))),
        Step::Server(elicit(5, form())),
    ]
}
