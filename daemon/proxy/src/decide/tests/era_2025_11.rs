//! MCP 2025-11-25: URL mode beside form mode, and task-augmented
//! elicitations the proxy serves as tasks.

use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::*;
use crate::owner::META_RELATED_TASK;

const TASK: &str = "elicitd-task-7-1";

fn init(capabilities: Value) -> Value {
    request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
               "clientInfo": {"name": "vscode", "version": "1.99"}}),
    )
}

/// `initialize`, answered.
fn ready(capabilities: Value) -> Vec<Step> {
    vec![
        Step::Host(init(capabilities)),
        Step::Server(result(json!(0), json!({}))),
    ]
}

fn tasks_declared() -> Value {
    json!({"elicitation": {"form": {}}, "tasks": {"requests": {"elicitation": {"create": {}}}}})
}

fn task_form(ttl: u64) -> Value {
    let mut params = form();
    params["task"] = json!({"ttl": ttl});
    params
}

fn elicit(params: Value) -> Value {
    request(json!(5), "elicitation/create", params)
}

/// A task-augmented form asked; ask 1 is its form.
fn with_task(capabilities: Value) -> Vec<Step> {
    let mut steps = ready(capabilities);
    steps.push(Step::Server(elicit(task_form(60_000))));
    steps
}

fn task_json(status: &str, message: &str, ttl: u64) -> Value {
    json!({"taskId": TASK, "status": status, "statusMessage": message,
           "createdAt": STAMP, "lastUpdatedAt": STAMP, "ttl": ttl, "pollInterval": 1000})
}

fn waiting(ttl: u64) -> Value {
    task_json(
        "input_required",
        "waiting for the user to answer a form (elicitd)",
        ttl,
    )
}

fn tasks(id: i64, method: &str, task: &str) -> Step {
    Step::Server(request(json!(id), method, json!({"taskId": task})))
}

fn of_task(mut result: Value) -> Value {
    result["_meta"] = json!({META_RELATED_TASK: {"taskId": TASK}});
    result
}

fn to_host_form() -> Vec<E> {
    vec![
        E::Stop(1),
        E::Say(TO_HOST.into()),
        log(TO_HOST),
        E::Host(request(json!("elicitd-proxy-1"), "elicitation/create", form())),
    ]
}

fn rows() -> Vec<Row> {
    let mut with_meta = form();
    with_meta["_meta"] = json!({META_RELATED_TASK: {"taskId": "t-1"}});
    let mut sent_init = init(Value::Null);
    sent_init["params"]["capabilities"] = json!({"elicitation": {"form": {}, "url": {}},
        "tasks": {"requests": {"elicitation": {"create": {}}}}});
    vec![
        Row {
            name: "initialize: url joins form, the tasks declaration stays",
            config: config(),
            setup: vec![],
            steps: vec![Step::Host(init(tasks_declared()))],
            expect: vec![
                E::Origin(OriginChange::Host {
                    name: Some("vscode".into()),
                    version: Some("1.99".into()),
                }),
                E::Server(sent_init),
            ],
        },
        Row {
            name: "a task-augmented form gets a task at once and the TTL as its deadline",
            config: config(),
            setup: ready(tasks_declared()),
            steps: vec![Step::Server(elicit(task_form(60_000)))],
            expect: vec![
                E::Server(result(json!(5), json!({"task": waiting(60_000)}))),
                E::Ask(1, form(), Some(60)),
                E::Start(1),
            ],
        },
        Row {
            name: "a TTL under a second still gets one",
            config: config(),
            setup: ready(tasks_declared()),
            steps: vec![Step::Server(elicit(task_form(10)))],
            expect: vec![
                E::Server(result(json!(5), json!({"task": waiting(10)}))),
                E::Ask(1, form(), Some(1)),
                E::Start(1),
            ],
        },
        Row {
            name: "tasks/get while the form waits",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![tasks(9, "tasks/get", TASK)],
            expect: vec![E::Server(result(json!(9), waiting(60_000)))],
        },
        Row {
            name: "tasks/result waits for the answer, which carries the related task",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![tasks(9, "tasks/result", TASK), Step::Reply(1, accept())],
            expect: vec![E::Stop(1), E::Server(result(json!(9), of_task(accepted())))],
        },
        Row {
            name: "tasks/result after the end is answered at once",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![
                Step::Reply(1, answered("decline")),
                tasks(9, "tasks/result", TASK),
            ],
            expect: vec![
                E::Stop(1),
                E::Server(result(json!(9), of_task(json!({"action": "decline"})))),
            ],
        },
        Row {
            name: "the server's tasks/cancel: cancelled, and the form withdrawn",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![tasks(9, "tasks/cancel", TASK)],
            expect: vec![
                E::Server(result(
                    json!(9),
                    task_json("cancelled", "the form was withdrawn", 60_000),
                )),
                E::Withdraw(1),
            ],
        },
        Row {
            name: "tasks/cancel of a task that ended: -32602",
            config: config(),
            setup: {
                let mut s = with_task(tasks_declared());
                s.push(Step::Reply(1, accept()));
                s
            },
            steps: vec![tasks(9, "tasks/cancel", TASK)],
            expect: vec![E::Server(error(
                json!(9),
                JsonRpcCode::INVALID_PARAMS,
                "the task has ended already",
            ))],
        },
        Row {
            name: "tasks/get of a task of the proxy's it does not know",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![tasks(9, "tasks/get", "elicitd-task-7-99")],
            expect: vec![E::Server(error(
                json!(9),
                JsonRpcCode::INVALID_PARAMS,
                "no such task",
            ))],
        },
        Row {
            name: "tasks/get of the host's own task passes to the host",
            config: config(),
            setup: ready(tasks_declared()),
            steps: vec![tasks(9, "tasks/get", "host-1")],
            expect: vec![E::RawHost(request(
                json!(9),
                "tasks/get",
                json!({"taskId": "host-1"}),
            ))],
        },
        Row {
            name: "tasks/list without tasks of the proxy's passes to the host",
            config: config(),
            setup: ready(tasks_declared()),
            steps: vec![Step::Server(request(json!(9), "tasks/list", json!({})))],
            expect: vec![E::RawHost(request(json!(9), "tasks/list", json!({})))],
        },
        Row {
            name: "the broker refuses: the task fails with the error",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![
                Step::Reply(
                    1,
                    Reply::Refused {
                        code: -32000,
                        detail: "full".into(),
                    },
                ),
                tasks(9, "tasks/result", TASK),
            ],
            expect: vec![
                E::Stop(1),
                E::Server(error(json!(9), -32000, "elicitd refused the elicitation: full")),
            ],
        },
        Row {
            name: "unreachable with a capable host: the host answers under the proxy's id",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![
                Step::Reply(1, unavailable()),
                Step::Host(result(json!("elicitd-proxy-1"), accepted())),
                tasks(9, "tasks/result", TASK),
            ],
            expect: {
                let mut e = to_host_form();
                e.push(E::Server(result(json!(9), of_task(accepted()))));
                e
            },
        },
        Row {
            name: "tasks/cancel while the host has the form: the host is told",
            config: config(),
            setup: with_task(tasks_declared()),
            steps: vec![Step::Reply(1, unavailable()), tasks(9, "tasks/cancel", TASK)],
            expect: {
                let mut e = to_host_form();
                e.push(E::Server(result(
                    json!(9),
                    task_json("cancelled", "the form was withdrawn", 60_000),
                )));
                e.push(E::Host(notification(
                    "notifications/cancelled",
                    json!({"requestId": "elicitd-proxy-1"}),
                )));
                e
            },
        },
        Row {
            name: "the host leaving ends a task the host was answering",
            config: config(),
            setup: {
                let mut s = with_task(tasks_declared());
                s.push(Step::Reply(1, unavailable()));
                s
            },
            steps: vec![tasks(9, "tasks/result", TASK), Step::HostLeft],
            expect: vec![
                E::Host(notification(
                    "notifications/cancelled",
                    json!({"requestId": "elicitd-proxy-1"}),
                )),
                E::Server(error(
                    json!(9),
                    JsonRpcCode::INVALID_PARAMS,
                    "the task was cancelled",
                )),
            ],
        },
        Row {
            name: "the host's tasks/cancel withdraws the forms of that task",
            config: config(),
            setup: {
                let mut s = ready(tasks_declared());
                s.push(Step::Server(elicit(with_meta.clone())));
                s
            },
            steps: vec![
                Step::Host(request(json!(4), "tasks/cancel", json!({"taskId": "t-1"}))),
                Step::Reply(1, Reply::Withdrawn),
            ],
            expect: vec![
                E::Withdraw(1),
                E::RawServer(request(json!(4), "tasks/cancel", json!({"taskId": "t-1"}))),
                E::Stop(1),
                E::Server(result(json!(5), json!({"action": "cancel"}))),
            ],
        },
        Row {
            name: "--prefer host with a URL-capable host: a URL form goes to the host",
            config: with(|c| c.prefer = Prefer::Host),
            setup: ready(json!({"elicitation": {"url": {}}})),
            steps: vec![Step::Server(elicit(url_form("e1")))],
            expect: vec![E::RawHost(elicit(url_form("e1")))],
        },
    ]
}

#[test]
fn the_2025_11_25_table() {
    assert_eq!(run(rows()), 17);
}
