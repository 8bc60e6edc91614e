//! MCP 2025-06-18: `initialize` declares the capabilities, the server asks
//! with `elicitation/create`.

use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::*;

mod flow;

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

/// The handshake and the answers: what the host declares, what the
/// server gets back. The rest of the table is in [`flow`].
fn rows() -> Vec<Row> {
    let bad = json!({"message": "x", "requestedSchema": {"type": "string"}});
    let bad_reason = invalid(&bad);
    assert!(!bad_reason.is_empty(), "the bad form is refused");
    let setup = || vec![Step::Host(init(json!({}))), Step::Server(elicit(5, form()))];
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
    ]
}

#[test]
fn the_2025_06_18_table() {
    assert_eq!(run(rows().into_iter().chain(flow::rows()).collect()), 37);
}
