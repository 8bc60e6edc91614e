//! MCP 2025-11-25 tasks: a server's task-augmented `elicitation/create`,
//! served as a task because the host declared
//! `tasks.requests.elicitation.create` and the proxy passes that
//! declaration on.
//!
//! The proxy is the task's receiver: it answers the request at once with a
//! `CreateTaskResult`, queues the form with the broker (the task's TTL is
//! the form's deadline), and answers the server's `tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel` from what it knows. The
//! task is `input_required` (a human must answer) until the form has its
//! outcome; then `completed`, its result the `ElicitResult`; `failed` when
//! the broker refused the form; `cancelled` when the server cancelled it
//! (the form is withdrawn) or the host left. A task is forgotten once its
//! TTL has passed after it ended, and at most [`MAX_TASKS`] are kept: past
//! that, a task-augmented request is answered synchronously, which the
//! spec allows a receiver.
//!
//! Tasks the host receives (`--prefer host`, or requests the proxy does
//! not handle) keep passing through: only ids of the proxy's own form
//! (`elicitd-task-…`) are answered here.

use std::collections::HashMap;

use chrono::{DateTime, SecondsFormat, Utc};
use elicit_proto::JsonRpcCode;
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::ask::{self, Decision};
use super::cancel::Cancel;
use super::message;
use super::outbox::Peer;
use super::owner::META_RELATED_TASK;
use super::state::Ctx;

/// The prefix of the ids of the proxy's tasks.
pub const ID_PREFIX: &str = "elicitd-task-";

/// The most tasks kept at once.
pub const MAX_TASKS: usize = 256;

/// How often the server is told to poll, in milliseconds: a human answers
/// in seconds, not milliseconds.
const POLL_INTERVAL_MS: u64 = 1000;

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The form waits for the user.
    InputRequired,
    /// The form has its outcome.
    Completed,
    /// The broker refused the form.
    Failed,
    /// Withdrawn: by the server, the host leaving, or the deadline.
    Cancelled,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn terminal(self) -> bool {
        self != Status::InputRequired
    }
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// The `ElicitResult`.
    Result(Value),
    /// The JSON-RPC error object the request would have had.
    Error(Value),
    /// Withdrawn.
    Cancelled,
}

#[derive(Debug)]
struct Task {
    status: Status,
    created: DateTime<Utc>,
    updated: DateTime<Utc>,
    ttl_ms: Option<u64>,
    cancel: Cancel,
    end: watch::Sender<Option<End>>,
}

impl Task {
    fn to_json(&self, id: &str) -> Value {
        let stamp = |t: &DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Millis, true);
        json!({
            "taskId": id,
            "status": self.status.name(),
            "statusMessage": match self.status {
                Status::InputRequired => "waiting for the user to answer a form (elicitd)",
                Status::Completed => "the user answered",
                Status::Failed => "elicitd refused the form",
                Status::Cancelled => "the form was withdrawn",
            },
            "createdAt": stamp(&self.created),
            "lastUpdatedAt": stamp(&self.updated),
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        })
    }

    /// Ended, and its TTL since creation has passed: it may be forgotten.
    fn expired(&self, now: DateTime<Utc>) -> bool {
        let Some(ttl) = self.ttl_ms else { return false };
        let age = now.signed_duration_since(self.created).num_milliseconds();
        self.status.terminal() && u64::try_from(age).is_ok_and(|age| age >= ttl)
    }
}

/// Why `tasks/cancel` was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum CancelRefused {
    /// No such task.
    Unknown,
    /// It has ended already (the spec's -32602).
    Ended,
}

/// The proxy's tasks.
#[derive(Debug, Default)]
pub struct Tasks {
    tasks: HashMap<String, Task>,
    next: u64,
}

impl Tasks {
    /// A new task with `ttl_ms`, whose form `cancel` withdraws; its id and
    /// its JSON, or `None` when [`MAX_TASKS`] are kept already.
    pub fn create(&mut self, ttl_ms: Option<u64>, cancel: Cancel) -> Option<(String, Value)> {
        let now = Utc::now();
        self.tasks.retain(|_, task| !task.expired(now));
        if self.tasks.len() >= MAX_TASKS {
            return None;
        }
        self.next += 1;
        let id = format!("{ID_PREFIX}{}-{}", std::process::id(), self.next);
        let task = Task {
            status: Status::InputRequired,
            created: now,
            updated: now,
            ttl_ms,
            cancel,
            end: watch::channel(None).0,
        };
        let json = task.to_json(&id);
        self.tasks.insert(id.clone(), task);
        Some((id, json))
    }

    /// Whether the proxy has made any task that it still keeps.
    pub fn any(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// The task's JSON (`tasks/get`).
    pub fn get(&self, id: &str) -> Option<Value> {
        self.tasks.get(id).map(|task| task.to_json(id))
    }

    /// Every task's JSON, oldest first (`tasks/list`).
    pub fn list(&self) -> Vec<Value> {
        let mut tasks: Vec<(&String, &Task)> = self.tasks.iter().collect();
        tasks.sort_by_key(|(id, task)| (task.created, (*id).clone()));
        tasks.into_iter().map(|(id, task)| task.to_json(id)).collect()
    }

    /// Records how the task ended; a task that ended already keeps its
    /// first end (a cancellation is not undone by a late answer).
    pub fn finish(&mut self, id: &str, end: End) {
        let Some(task) = self.tasks.get_mut(id) else {
            return;
        };
        if task.status.terminal() {
            return;
        }
        task.status = match end {
            End::Result(_) => Status::Completed,
            End::Error(_) => Status::Failed,
            End::Cancelled => Status::Cancelled,
        };
        task.updated = Utc::now();
        task.end.send_replace(Some(end));
    }

    /// `tasks/cancel`: the task is cancelled before the answer goes (as the
    /// spec requires) and its form withdrawn; the task's JSON.
    pub fn cancel(&mut self, id: &str) -> Result<Value, CancelRefused> {
        let task = self.tasks.get(id).ok_or(CancelRefused::Unknown)?;
        if task.status.terminal() {
            return Err(CancelRefused::Ended);
        }
        task.cancel.cancel();
        self.finish(id, End::Cancelled);
        self.get(id).ok_or(CancelRefused::Unknown)
    }

    /// Withdraws every form still open (the host left).
    pub fn cancel_all(&self) {
        for task in self.tasks.values() {
            task.cancel.cancel();
        }
    }

    /// Resolves to how the task ended; `None` for an unknown task.
    pub fn ended(&self, id: &str) -> Option<impl Future<Output = Option<End>> + use<>> {
        let mut end = self.tasks.get(id)?.end.subscribe();
        Some(async move {
            end.wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|end| end.clone())
        })
    }
}

/// The TTL of a task-augmented request's `params.task`, if it is one.
pub fn requested(params: &Value) -> Option<Option<u64>> {
    let task = params.get("task")?.as_object()?;
    Some(task.get("ttl").and_then(Value::as_u64))
}

/// Serves the server's task-augmented `elicitation/create` `id` as a task;
/// false when the proxy keeps too many tasks, and the caller answers it
/// synchronously.
pub fn start(ctx: &Ctx, id: &Value, params: &Value, ttl_ms: Option<u64>) -> bool {
    let cancel = Cancel::new();
    let Some((task_id, task)) = ctx.state().tasks.create(ttl_ms, cancel.clone()) else {
        tracing::warn!(
            max = MAX_TASKS,
            "too many tasks; answering an elicitation synchronously"
        );
        return false;
    };
    ctx.outbox
        .send(Peer::Server, &message::result(id, json!({"task": task})));
    let mut plain = params.clone();
    if let Some(params) = plain.as_object_mut() {
        params.remove("task");
    }
    // The broker counts whole seconds; a TTL below one still gets one.
    let timeout_secs = ttl_ms.map(|ms| ms.div_ceil(1000).max(1));
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let tokens = {
            let ctx = ctx.clone();
            move || ctx.open_progress_tokens()
        };
        let end = match ask::ask_within(&ctx, &plain, timeout_secs, &cancel, tokens).await {
            Decision::Result(result) | Decision::Unasked { result, .. } => End::Result(result),
            Decision::Host => ask_host(&ctx, &plain, &cancel).await,
            Decision::Invalid(reason) => End::Error(json!({
                "code": JsonRpcCode::INVALID_PARAMS,
                "message": format!("elicitd refused the elicitation: {reason}"),
            })),
            Decision::Refused(error) => End::Error(json!({
                "code": error.jsonrpc_code(),
                "message": format!("elicitd refused the elicitation: {}", error.detail()),
            })),
            Decision::Withdrawn => End::Cancelled,
        };
        ctx.state().tasks.finish(&task_id, end);
    });
    true
}

/// The no-broker fallback gave the form to the host: it is asked as a
/// plain elicitation (the task stays the proxy's), under an id of the
/// proxy's own.
async fn ask_host(ctx: &Ctx, params: &Value, cancel: &Cancel) -> End {
    let id = ctx.outbox.fresh_id();
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params});
    let reply = ctx.outbox.request(Peer::Host, &request);
    tokio::select! {
        reply = reply => match reply {
            Ok(reply) => match (reply.get("result"), reply.get("error")) {
                (Some(result), _) => End::Result(result.clone()),
                (None, Some(error)) => End::Error(error.clone()),
                (None, None) => End::Error(json!({"code": JsonRpcCode::INTERNAL_ERROR, "message": "the host's answer was empty"})),
            },
            Err(_) => End::Error(json!({"code": JsonRpcCode::INTERNAL_ERROR, "message": "the host went away"})),
        },
        () = cancel.cancelled() => {
            ctx.outbox.forget(&id);
            let note = message::notification("notifications/cancelled", json!({"requestId": id}));
            ctx.outbox.send(Peer::Host, &note);
            End::Cancelled
        }
    }
}

/// A server request about tasks; true when it concerned the proxy's tasks
/// and was answered here.
pub fn on_request(ctx: &Ctx, request: &Value) -> bool {
    let (Some(method), Some(id)) = (message::method(request), message::id(request)) else {
        return false;
    };
    let task_id = request
        .get("params")
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .filter(|t| t.starts_with(ID_PREFIX))
        .map(str::to_owned);
    let unknown = |id: &Value| message::error(id, JsonRpcCode::INVALID_PARAMS, "no such task", None);
    let reply = match (method, task_id) {
        ("tasks/list", _) => {
            let tasks = ctx.state().tasks.list();
            if tasks.is_empty() {
                return false;
            }
            message::result(id, json!({"tasks": tasks}))
        }
        ("tasks/get", Some(task)) => match ctx.state().tasks.get(&task) {
            Some(json) => message::result(id, json),
            None => unknown(id),
        },
        ("tasks/cancel", Some(task)) => match ctx.state().tasks.cancel(&task) {
            Ok(json) => message::result(id, json),
            Err(CancelRefused::Unknown) => unknown(id),
            Err(CancelRefused::Ended) => message::error(
                id,
                JsonRpcCode::INVALID_PARAMS,
                "the task has ended already",
                None,
            ),
        },
        ("tasks/result", Some(task)) => {
            let Some(ended) = ctx.state().tasks.ended(&task) else {
                ctx.outbox.send(Peer::Server, &unknown(id));
                return true;
            };
            let ctx = ctx.clone();
            let id = id.clone();
            // `tasks/result` waits until the task has ended.
            tokio::spawn(async move {
                let reply = result_of(&id, &task, ended.await);
                ctx.outbox.send(Peer::Server, &reply);
            });
            return true;
        }
        _ => return false,
    };
    ctx.outbox.send(Peer::Server, &reply);
    true
}

/// The `tasks/result` answer for a task that ended with `end`.
fn result_of(id: &Value, task: &str, end: Option<End>) -> Value {
    match end {
        Some(End::Result(mut result)) => {
            if let Some(fields) = result.as_object_mut() {
                let meta = fields.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(META_RELATED_TASK.into(), json!({"taskId": task}));
                }
            }
            message::result(id, result)
        }
        Some(End::Error(error)) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        Some(End::Cancelled) | None => {
            message::error(id, JsonRpcCode::INVALID_PARAMS, "the task was cancelled", None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_waits_for_input_then_completes_with_the_result() {
        let mut tasks = Tasks::default();
        let (id, created) = tasks.create(Some(60_000), Cancel::new()).expect("room");
        assert!(id.starts_with(ID_PREFIX));
        assert_eq!(created["status"], "input_required");
        assert_eq!(created["ttl"], 60_000);
        tasks.finish(&id, End::Result(json!({"action": "accept", "content": {"n": 1}})));
        assert_eq!(tasks.get(&id).expect("kept")["status"], "completed");
        let reply = result_of(&json!(5), &id, Some(End::Result(json!({"action": "accept"}))));
        assert_eq!(reply["result"]["action"], "accept");
        assert_eq!(reply["result"]["_meta"][META_RELATED_TASK]["taskId"], id);
    }

    #[test]
    fn cancel_withdraws_the_form_and_is_final() {
        let mut tasks = Tasks::default();
        let form = Cancel::new();
        let (id, _) = tasks.create(None, form.clone()).expect("room");
        let json = tasks.cancel(&id).expect("cancelled");
        assert_eq!(json["status"], "cancelled");
        assert!(form.is_cancelled(), "the form is withdrawn");
        assert_eq!(tasks.cancel(&id), Err(CancelRefused::Ended));
        // A late answer does not undo the cancellation.
        tasks.finish(&id, End::Result(json!({"action": "accept"})));
        assert_eq!(tasks.get(&id).expect("kept")["status"], "cancelled");
        assert_eq!(tasks.cancel("elicitd-task-nope"), Err(CancelRefused::Unknown));
    }

    #[test]
    fn the_number_of_tasks_is_bounded_and_ended_ones_expire() {
        let mut tasks = Tasks::default();
        let ids: Vec<String> = (0..MAX_TASKS)
            .map(|_| tasks.create(Some(0), Cancel::new()).expect("room").0)
            .collect();
        assert!(tasks.create(Some(0), Cancel::new()).is_none(), "full");
        // Ended, with a TTL of 0: forgotten at the next creation.
        tasks.finish(&ids[0], End::Cancelled);
        assert!(tasks.create(Some(0), Cancel::new()).is_some());
        assert!(tasks.get(&ids[0]).is_none());
        assert_eq!(tasks.list().len(), MAX_TASKS);
    }

    #[test]
    fn only_task_augmented_requests_are_tasks() {
        assert_eq!(
            requested(&json!({"message": "m", "task": {"ttl": 5}})),
            Some(Some(5))
        );
        assert_eq!(requested(&json!({"message": "m", "task": {}})), Some(None));
        assert_eq!(requested(&json!({"message": "m"})), None);
    }

    #[tokio::test]
    async fn a_waiting_result_resolves_when_the_task_ends() {
        let mut tasks = Tasks::default();
        let (id, _) = tasks.create(None, Cancel::new()).expect("room");
        let ended = tasks.ended(&id).expect("known");
        tasks.finish(&id, End::Result(json!({"action": "decline"})));
        assert_eq!(ended.await, Some(End::Result(json!({"action": "decline"}))));
        assert!(tasks.ended("elicitd-task-nope").is_none());
    }
}
