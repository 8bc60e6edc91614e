//! MCP 2026-07-28: capabilities in every request's `_meta`, and
//! `input_required` results the proxy answers in rounds.

use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::*;
use crate::caps::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO};

const RETRY: &str = "elicitd-proxy-1";

fn meta(capabilities: Value) -> Value {
    json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: capabilities})
}

fn call_with(id: i64, meta: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": "book", "_meta": meta}))
}

fn call(id: i64) -> Value {
    call_with(id, meta(json!({})))
}

/// The call as the server sees it: the capability merged.
fn sent(id: Value) -> Value {
    let mut sent = call(2);
    sent["id"] = id;
    sent["params"]["_meta"][META_CLIENT_CAPABILITIES] = json!({"elicitation": {"form": {}, "url": {}}});
    sent
}

fn input_required(id: Value, entries: Value, state: Option<&str>) -> Value {
    let mut result = json!({"resultType": "input_required", "inputRequests": entries});
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn entry(params: Value) -> Value {
    json!({"method": "elicitation/create", "params": params})
}

fn one() -> Value {
    json!({"a": entry(form())})
}

fn two() -> Value {
    json!({"a": entry(form()), "b": entry(url_form("e1"))})
}

fn retry(answers: Value, state: Option<&str>) -> E {
    let mut retry = sent(json!(RETRY));
    retry["params"]["inputResponses"] = answers;
    if let Some(state) = state {
        retry["params"]["requestState"] = json!(state);
    }
    E::Server(retry)
}

fn booked() -> Value {
    json!({"content": [{"type": "text", "text": "booked"}]})
}

/// The call 2 and its first round, one entry: ask 1, keep-alive 2.
fn asked() -> Vec<Step> {
    vec![
        Step::Host(call(2)),
        Step::Server(input_required(json!(2), one(), Some("s1"))),
    ]
}

fn rows() -> Vec<Row> {
    let bad = json!({"message": "x", "requestedSchema": {"type": "string"}});
    let bad_reason = invalid(&bad);
    let sampling = json!({"s": {"method": "sampling/createMessage", "params": {}}, "a": entry(form())});
    let cancel_2 = notification("notifications/cancelled", json!({"requestId": 2}));
    let mut stale = call(2);
    stale["params"]["requestState"] = json!("stale");
    vec![
        Row {
            name: "a 2026 request is declared form and url in its _meta",
            config: config(),
            setup: vec![],
            steps: vec![Step::Host(call(2))],
            expect: vec![E::Server(sent(json!(2)))],
        },
        Row {
            name: "its clientInfo names the host",
            config: config(),
            setup: vec![],
            steps: vec![Step::Host(call_with(
                2,
                json!({META_PROTOCOL_VERSION: "2026-07-28",
                       META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}, "url": {}}},
                       META_CLIENT_INFO: {"name": "goose", "version": "1.0"}}),
            ))],
            expect: vec![
                E::Origin(OriginChange::Host {
                    name: Some("goose".into()),
                    version: Some("1.0".into()),
                }),
                E::RawServer(call_with(
                    2,
                    json!({META_PROTOCOL_VERSION: "2026-07-28",
                           META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}, "url": {}}},
                           META_CLIENT_INFO: {"name": "goose", "version": "1.0"}}),
                )),
            ],
        },
        Row {
            name: "input_required: the entry goes to the broker, with the round's keep-alive",
            config: config(),
            setup: vec![Step::Host(call(2))],
            steps: vec![Step::Server(input_required(json!(2), one(), Some("s1")))],
            expect: vec![E::Ask(1, form(), None), E::Start(2)],
        },
        Row {
            name: "answered: a retry under a new id with the answers and requestState",
            config: config(),
            setup: asked(),
            steps: vec![Step::Reply(1, accept())],
            expect: vec![E::Stop(2), retry(json!({"a": accepted()}), Some("s1"))],
        },
        Row {
            name: "the retry's result goes to the host under the host's id",
            config: config(),
            setup: {
                let mut s = asked();
                s.push(Step::Reply(1, accept()));
                s
            },
            steps: vec![Step::Server(result(json!(RETRY), booked()))],
            expect: vec![E::Host(result(json!(2), booked()))],
        },
        Row {
            name: "two entries: asked in order, answered out of order, sent in order",
            config: config(),
            setup: vec![Step::Host(call(2))],
            steps: vec![
                Step::Server(input_required(json!(2), two(), None)),
                Step::Reply(2, answered("decline")),
                Step::Reply(1, accept()),
            ],
            expect: vec![
                E::Ask(1, form(), None),
                E::Ask(2, url_form("e1"), None),
                E::Start(3),
                E::Stop(3),
                retry(json!({"a": accepted(), "b": {"action": "decline"}}), None),
            ],
        },
        Row {
            name: "no requestState from the server: none in the retry",
            config: config(),
            setup: vec![Step::Host(stale)],
            steps: vec![
                Step::Server(input_required(json!(2), one(), None)),
                Step::Reply(1, accept()),
            ],
            expect: vec![
                E::Ask(1, form(), None),
                E::Start(2),
                E::Stop(2),
                retry(json!({"a": accepted()}), None),
            ],
        },
        Row {
            name: "more rounds than --max-rounds: an error to the host",
            config: with(|c| c.max_rounds = 1),
            setup: {
                let mut s = asked();
                s.push(Step::Reply(1, accept()));
                s
            },
            steps: vec![Step::Server(input_required(json!(RETRY), one(), Some("s2")))],
            expect: vec![E::Host(error(
                json!(2),
                JsonRpcCode::INTERNAL_ERROR,
                "the server asked for input more than 1 times for one request; elicit proxy gave up (see --max-rounds)",
            ))],
        },
        Row {
            name: "a second round within --max-rounds is asked",
            config: with(|c| c.max_rounds = 2),
            setup: {
                let mut s = asked();
                s.push(Step::Reply(1, accept()));
                s
            },
            steps: vec![Step::Server(input_required(json!(RETRY), one(), Some("s2")))],
            expect: vec![E::Ask(3, form(), None), E::Start(4)],
        },
        Row {
            name: "input_required without inputRequests: an error",
            config: config(),
            setup: vec![Step::Host(call(2))],
            steps: vec![Step::Server(
                json!({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "input_required"}}),
            )],
            expect: vec![E::Host(error(
                json!(2),
                JsonRpcCode::INTERNAL_ERROR,
                "the server asked for input but sent no inputRequests",
            ))],
        },
        Row {
            name: "sampling the host declared: the whole round goes to the host",
            config: config(),
            setup: vec![Step::Host(call_with(2, meta(json!({"sampling": {}}))))],
            steps: vec![Step::Server(input_required(json!(2), sampling.clone(), None))],
            expect: vec![E::Host(input_required(json!(2), sampling.clone(), None))],
        },
        Row {
            name: "sampling the host did not declare: an error",
            config: config(),
            setup: vec![Step::Host(call(2))],
            steps: vec![Step::Server(input_required(json!(2), sampling, None))],
            expect: vec![E::Host(error(
                json!(2),
                JsonRpcCode::INTERNAL_ERROR,
                "the server needs `sampling/createMessage` from the host (entry `s`), which the host did not declare; elicit proxy answers elicitations only",
            ))],
        },
        Row {
            name: "an invalid entry fails the round before any form is shown",
            config: config(),
            setup: vec![Step::Host(call(2))],
            steps: vec![Step::Server(input_required(
                json!(2),
                json!({"a": entry(form()), "z": entry(bad)}),
                None,
            ))],
            expect: vec![E::Host(error(
                json!(2),
                JsonRpcCode::INVALID_PARAMS,
                &format!("the server asked for an invalid form (`z`): {bad_reason}"),
            ))],
        },
        Row {
            name: "the broker refuses one entry: the others are withdrawn, an error",
            config: config(),
            setup: vec![
                Step::Host(call(2)),
                Step::Server(input_required(json!(2), two(), None)),
            ],
            steps: vec![Step::Reply(
                1,
                Reply::Refused {
                    code: -32000,
                    detail: "full".into(),
                },
            )],
            expect: vec![
                E::Withdraw(2),
                E::Stop(3),
                E::Host(error(json!(2), -32000, "elicitd refused the form `a`: full")),
            ],
        },
        Row {
            name: "unreachable, no host form: cancel, and the warning in the final content",
            config: config(),
            setup: vec![Step::Host(call(2))],
            steps: vec![
                Step::Server(input_required(json!(2), one(), None)),
                Step::Reply(1, unavailable()),
                Step::Server(result(json!(RETRY), json!({"content": []}))),
            ],
            expect: vec![
                E::Ask(1, form(), None),
                E::Start(2),
                E::Say(unasked("cancel")),
                log(&unasked("cancel")),
                E::Stop(2),
                retry(json!({"a": {"action": "cancel"}}), None),
                E::Host(result(
                    json!(2),
                    json!({"content": [{"type": "text", "text": unasked("cancel")}]}),
                )),
            ],
        },
        Row {
            name: "unreachable, the host declared form: the round goes to the host",
            config: config(),
            setup: vec![Step::Host(call_with(2, meta(json!({"elicitation": {}}))))],
            steps: vec![
                Step::Server(input_required(json!(2), one(), None)),
                Step::Reply(1, unavailable()),
            ],
            expect: vec![
                E::Ask(1, form(), None),
                E::Start(2),
                E::Say(TO_HOST.into()),
                log(TO_HOST),
                E::Stop(2),
                E::Host(input_required(json!(2), one(), None)),
            ],
        },
        Row {
            name: "the host cancels while the broker has the round: withdrawn whole",
            config: config(),
            setup: vec![
                Step::Host(call(2)),
                Step::Server(input_required(json!(2), two(), None)),
            ],
            steps: vec![Step::Host(cancel_2.clone())],
            expect: vec![
                E::Withdraw(1),
                E::Withdraw(2),
                E::Stop(3),
                E::RawServer(cancel_2.clone()),
            ],
        },
        Row {
            name: "the host cancels during the retry: the retry is cancelled, its late answer swallowed",
            config: config(),
            setup: {
                let mut s = asked();
                s.push(Step::Reply(1, accept()));
                s
            },
            steps: vec![
                Step::Host(cancel_2.clone()),
                Step::Server(result(json!(RETRY), booked())),
            ],
            expect: vec![
                E::Server(notification(
                    "notifications/cancelled",
                    json!({"requestId": RETRY, "reason": "the host cancelled the request"}),
                )),
                E::RawServer(cancel_2),
            ],
        },
        Row {
            name: "--prefer host with a form-capable host: input_required passes on",
            config: with(|c| c.prefer = Prefer::Host),
            setup: vec![Step::Host(call_with(2, meta(json!({"elicitation": {}}))))],
            steps: vec![Step::Server(input_required(json!(2), one(), None))],
            expect: vec![E::RawHost(input_required(json!(2), one(), None))],
        },
        Row {
            name: "a method that cannot be retried passes input_required on",
            config: config(),
            setup: vec![Step::Host(request(
                json!(2),
                "tools/list",
                json!({"_meta": meta(json!({}))}),
            ))],
            steps: vec![Step::Server(input_required(json!(2), one(), None))],
            expect: vec![E::RawHost(input_required(json!(2), one(), None))],
        },
        Row {
            name: "a round's keep-alive reports its own request's token only",
            config: config(),
            setup: {
                let mut with_token = meta(json!({}));
                with_token["progressToken"] = json!("t2");
                let mut other = meta(json!({}));
                other["progressToken"] = json!("t3");
                vec![
                    Step::Host(call_with(2, with_token)),
                    Step::Host(call_with(3, other)),
                    Step::Server(input_required(json!(2), one(), None)),
                ]
            },
            steps: vec![Step::Tick(2, 1)],
            expect: vec![E::Host(notification(
                "notifications/progress",
                json!({"progressToken": "t2", "progress": 1,
                       "message": "waiting for the user to answer a form (elicitd)"}),
            ))],
        },
        Row {
            name: "the host leaving ends the round",
            config: config(),
            setup: asked(),
            steps: vec![Step::HostLeft],
            expect: vec![E::Withdraw(1), E::Stop(2)],
        },
        Row {
            name: "a result's serverInfo names the server, the result passes on",
            config: config(),
            setup: vec![Step::Host(call(5))],
            steps: vec![Step::Server(result(
                json!(5),
                json!({"content": [], "_meta": {META_SERVER_INFO: {"name": "trips", "version": "3"}}}),
            ))],
            expect: vec![
                E::Origin(OriginChange::Server {
                    name: "trips".into(),
                    version: Some("3".into()),
                }),
                E::RawHost(result(
                    json!(5),
                    json!({"content": [], "_meta": {META_SERVER_INFO: {"name": "trips", "version": "3"}}}),
                )),
            ],
        },
    ]
}

#[test]
fn the_2026_07_28_table() {
    assert_eq!(run(rows()), 23);
}
