//! MCP 2025-06-18: `initialize` declares the capabilities, the server asks
//! with `elicitation/create`.

use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::*;

fn init(capabilities: Value) -> Value {
    request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
               "clientInfo": {"name": "claude-code", "version": "2.0"}}),
    )
}

fn init_as_sent(capabilities: Value) -> Value {
    let mut sent = init(Value::Null);
    sent["params"]["capabilities"] = capabilities;
    sent
}

fn claude() -> E {
    E::Origin(OriginChange::Host {
        name: Some("claude-code".into()),
        version: Some("2.0".into()),
    })
}

fn elicit(id: i64, params: Value) -> Value {
    request(json!(id), "elicitation/create", params)
}

fn call(id: i64, meta: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": "book", "_meta": meta}))
}

fn both() -> Value {
    json!({"form": {}, "url": {}})
}

/// The host's answer to `5` when nobody was asked and it answered `action`.
fn fallback_answer(action: &str) -> Vec<E> {
    let said = unasked(action);
    vec![
        E::Stop(1),
        E::Say(said.clone()),
        log(&said),
        E::Server(result(json!(5), json!({"action": action}))),
    ]
}

fn to_host() -> Vec<E> {
    vec![
        E::Stop(1),
        E::Say(TO_HOST.into()),
        log(TO_HOST),
        E::RawHost(elicit(5, form())),
    ]
}

/// A row where the broker cannot be reached, under `config`, for a host
/// that declared `capabilities`.
fn unreachable(name: &'static str, config: Config, capabilities: Value, expect: Vec<E>) -> Row {
    Row {
        name,
        config,
        setup: vec![Step::Host(init(capabilities)), Step::Server(elicit(5, form()))],
        steps: vec![Step::Reply(1, unavailable())],
        expect,
    }
}

fn rows() -> Vec<Row> {
    let bad = json!({"message": "x", "requestedSchema": {"type": "string"}});
    let bad_reason = invalid(&bad);
    assert!(!bad_reason.is_empty(), "the bad form is refused");
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
            name: "initialize without elicitation is declared form and url",
            config: config(),
            setup: vec![],
            steps: vec![Step::Host(init(json!({})))],
            expect: vec![claude(), E::Server(init_as_sent(json!({"elicitation": both()})))],
        },
        Row {
            name: "initialize with elicitation {} keeps the rest and gains url",
            config: config(),
            setup: vec![],
            steps: vec![Step::Host(init(
                json!({"roots": {"listChanged": true}, "elicitation": {}}),
            ))],
            expect: vec![
                claude(),
                E::Server(init_as_sent(
                    json!({"roots": {"listChanged": true}, "elicitation": both()}),
                )),
            ],
        },
        Row {
            name: "a complete declaration travels byte for byte",
            config: config(),
            setup: vec![],
            steps: vec![Step::Host(init(json!({"elicitation": both()})))],
            expect: vec![claude(), E::RawServer(init(json!({"elicitation": both()})))],
        },
        Row {
            name: "a placeholder clientInfo names the host's process instead",
            config: with(|c| c.host_process = Some("codex".into())),
            setup: vec![],
            steps: vec![Step::Host(request(
                json!(0),
                "initialize",
                json!({"capabilities": {"elicitation": both()}, "clientInfo": {"name": "mcp"}}),
            ))],
            expect: vec![
                E::Origin(OriginChange::Host {
                    name: Some("codex".into()),
                    version: None,
                }),
                E::RawServer(request(
                    json!(0),
                    "initialize",
                    json!({"capabilities": {"elicitation": both()}, "clientInfo": {"name": "mcp"}}),
                )),
            ],
        },
        Row {
            name: "the initialize result names the server",
            config: config(),
            setup: vec![Step::Host(init(json!({})))],
            steps: vec![Step::Server(result(
                json!(0),
                json!({"serverInfo": {"name": "weather", "version": "1.2"}}),
            ))],
            expect: vec![
                E::Origin(OriginChange::Server {
                    name: "weather".into(),
                    version: Some("1.2".into()),
                }),
                E::RawHost(result(
                    json!(0),
                    json!({"serverInfo": {"name": "weather", "version": "1.2"}}),
                )),
            ],
        },
        Row {
            name: "elicitation/create goes to the broker with a keep-alive",
            config: config(),
            setup: vec![Step::Host(init(json!({})))],
            steps: vec![Step::Server(elicit(5, form()))],
            expect: vec![E::Ask(1, form(), None), E::Start(1)],
        },
        Row {
            name: "accept: the content goes to the server",
            config: config(),
            setup: setup(),
            steps: vec![Step::Reply(1, accept())],
            expect: vec![E::Stop(1), E::Server(result(json!(5), accepted()))],
        },
        Row {
            name: "decline: no content",
            config: config(),
            setup: setup(),
            steps: vec![Step::Reply(1, answered("decline"))],
            expect: vec![
                E::Stop(1),
                E::Server(result(json!(5), json!({"action": "decline"}))),
            ],
        },
        Row {
            name: "cancel: no content",
            config: config(),
            setup: setup(),
            steps: vec![Step::Reply(1, answered("cancel"))],
            expect: vec![
                E::Stop(1),
                E::Server(result(json!(5), json!({"action": "cancel"}))),
            ],
        },
        Row {
            name: "the broker refuses: an error with its code",
            config: config(),
            setup: setup(),
            steps: vec![Step::Reply(
                1,
                Reply::Refused {
                    code: -32000,
                    detail: "too many forms".into(),
                },
            )],
            expect: vec![
                E::Stop(1),
                E::Server(error(
                    json!(5),
                    -32000,
                    "elicitd refused the elicitation: too many forms",
                )),
            ],
        },
        Row {
            name: "a form outside the MCP subset is refused at once",
            config: config(),
            setup: vec![Step::Host(init(json!({})))],
            steps: vec![Step::Server(elicit(5, bad))],
            expect: vec![E::Server(error(
                json!(5),
                JsonRpcCode::INVALID_PARAMS,
                &format!("elicitd refused the elicitation: {bad_reason}"),
            ))],
        },
        unreachable(
            "unreachable, auto, host declared form: the host answers",
            config(),
            json!({"elicitation": {}}),
            to_host(),
        ),
        unreachable(
            "unreachable, auto, host did not declare: cancel",
            config(),
            json!({}),
            fallback_answer("cancel"),
        ),
        unreachable(
            "unreachable, --no-broker decline: decline even with a capable host",
            with(|c| c.no_broker = NoBroker::Decline),
            json!({"elicitation": {}}),
            fallback_answer("decline"),
        ),
        unreachable(
            "unreachable, --no-broker cancel: cancel even with a capable host",
            with(|c| c.no_broker = NoBroker::Cancel),
            json!({"elicitation": {}}),
            fallback_answer("cancel"),
        ),
        unreachable(
            "unreachable, --no-broker host, host declared form: the host answers",
            with(|c| c.no_broker = NoBroker::Host),
            json!({"elicitation": {"form": {}}}),
            to_host(),
        ),
        unreachable(
            "unreachable, --no-broker host, host did not declare: cancel",
            with(|c| c.no_broker = NoBroker::Host),
            json!({"elicitation": {"url": {}}}),
            fallback_answer("cancel"),
        ),
        Row {
            name: "logging/setLevel error keeps the warning off the host",
            config: config(),
            setup: vec![
                Step::Host(init(json!({}))),
                Step::Host(request(json!(1), "logging/setLevel", json!({"level": "error"}))),
                Step::Server(elicit(5, form())),
            ],
            steps: vec![Step::Reply(1, unavailable())],
            expect: vec![
                E::Stop(1),
                E::Say(unasked("cancel")),
                E::Server(result(json!(5), json!({"action": "cancel"}))),
            ],
        },
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
            name: "a form asked while two requests ran belongs to neither",
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

#[test]
fn the_2025_06_18_table() {
    assert_eq!(run(rows()), 32);
}
