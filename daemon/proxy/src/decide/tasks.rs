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
//! (`elicitd-task-…`) are answered here. [`forms`](super::task_forms)
//! holds what the relay does with them.

use std::collections::HashMap;

use chrono::{DateTime, SecondsFormat, Utc};
use elicit_proto::JsonRpcCode;
use serde_json::{Map, Value, json};

use super::AskId;
use crate::message;
use crate::owner::META_RELATED_TASK;

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

/// Where a task's form is while the task waits.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// Nowhere (yet, or any more).
    None,
    /// The broker has it.
    Broker(AskId),
    /// The host has it, asked under this id of the proxy's own.
    Host(Value),
}

#[derive(Debug)]
struct Task {
    status: Status,
    created: DateTime<Utc>,
    updated: DateTime<Utc>,
    ttl_ms: Option<u64>,
    form: Form,
    end: Option<End>,
    /// The ids of the server's `tasks/result` requests waiting for the end.
    waiting: Vec<Value>,
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
    /// A new task with `ttl_ms`, created at `now` by the process `pid`; its
    /// id and its JSON, or `None` when [`MAX_TASKS`] are kept already.
    pub fn create(&mut self, now: DateTime<Utc>, pid: u32, ttl_ms: Option<u64>) -> Option<(String, Value)> {
        self.tasks.retain(|_, task| !task.expired(now));
        if self.tasks.len() >= MAX_TASKS {
            return None;
        }
        self.next += 1;
        let id = format!("{ID_PREFIX}{pid}-{}", self.next);
        let task = Task {
            status: Status::InputRequired,
            created: now,
            updated: now,
            ttl_ms,
            form: Form::None,
            end: None,
            waiting: Vec::new(),
        };
        let json = task.to_json(&id);
        self.tasks.insert(id.clone(), task);
        Some((id, json))
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

    /// Where the task's form is; [`Form::None`] for an unknown task.
    pub fn form(&self, id: &str) -> Form {
        self.tasks.get(id).map_or(Form::None, |task| task.form.clone())
    }

    /// Records where the task's form is now.
    pub fn set_form(&mut self, id: &str, form: Form) {
        if let Some(task) = self.tasks.get_mut(id) {
            task.form = form;
        }
    }

    /// Whether the task has ended (or is unknown).
    pub fn ended(&self, id: &str) -> bool {
        self.tasks.get(id).is_none_or(|task| task.status.terminal())
    }

    /// The tasks still waiting, with their forms.
    pub fn open(&self) -> Vec<(String, Form)> {
        self.tasks
            .iter()
            .filter(|(_, task)| !task.status.terminal())
            .map(|(id, task)| (id.clone(), task.form.clone()))
            .collect()
    }

    /// Records how the task ended at `now`; a task that ended already
    /// keeps its first end (a cancellation is not undone by a late
    /// answer). The answers to the `tasks/result` requests that waited.
    pub fn finish(&mut self, now: DateTime<Utc>, id: &str, end: End) -> Vec<Value> {
        let Some(task) = self.tasks.get_mut(id) else {
            return Vec::new();
        };
        if task.status.terminal() {
            return Vec::new();
        }
        task.status = match end {
            End::Result(_) => Status::Completed,
            End::Error(_) => Status::Failed,
            End::Cancelled => Status::Cancelled,
        };
        task.updated = now;
        task.form = Form::None;
        let waiting = std::mem::take(&mut task.waiting);
        let replies = waiting.iter().map(|w| result_of(w, id, Some(&end))).collect();
        task.end = Some(end);
        replies
    }

    /// `tasks/cancel`: the task is cancelled before the answer goes (as
    /// the spec requires); its JSON, the form to withdraw, and the answers
    /// to the `tasks/result` requests that waited.
    pub fn cancel(
        &mut self,
        now: DateTime<Utc>,
        id: &str,
    ) -> Result<(Value, Form, Vec<Value>), CancelRefused> {
        let task = self.tasks.get(id).ok_or(CancelRefused::Unknown)?;
        if task.status.terminal() {
            return Err(CancelRefused::Ended);
        }
        let form = task.form.clone();
        let replies = self.finish(now, id, End::Cancelled);
        let json = self.get(id).ok_or(CancelRefused::Unknown)?;
        Ok((json, form, replies))
    }

    /// `tasks/result` `request`: the answer when the task has ended (or
    /// is unknown); `None` while it waits, answered by [`Tasks::finish`].
    pub fn result_or_wait(&mut self, request: &Value, id: &str) -> Option<Value> {
        let Some(task) = self.tasks.get_mut(id) else {
            return Some(unknown(request));
        };
        if task.status.terminal() {
            return Some(result_of(request, id, task.end.as_ref()));
        }
        task.waiting.push(request.clone());
        None
    }
}

/// The TTL of a task-augmented request's `params.task`, if it is one.
pub fn requested(params: &Value) -> Option<Option<u64>> {
    let task = params.get("task")?.as_object()?;
    Some(task.get("ttl").and_then(Value::as_u64))
}

/// The answer about a task the proxy does not know.
pub fn unknown(id: &Value) -> Value {
    message::error(id, JsonRpcCode::INVALID_PARAMS, "no such task", None)
}

/// The `tasks/result` answer for a task that ended with `end`.
fn result_of(id: &Value, task: &str, end: Option<&End>) -> Value {
    match end {
        Some(End::Result(result)) => {
            let mut result = result.clone();
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

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default()
    }

    #[test]
    fn a_task_waits_for_input_then_completes_with_the_result() {
        let mut tasks = Tasks::default();
        let (id, created) = tasks.create(now(), 7, Some(60_000)).expect("room");
        assert_eq!(id, "elicitd-task-7-1");
        assert_eq!(created["status"], "input_required");
        assert_eq!(created["ttl"], 60_000);
        assert_eq!(tasks.result_or_wait(&json!(5), &id), None, "waits");
        let replies = tasks.finish(now(), &id, End::Result(json!({"action": "accept"})));
        assert_eq!(tasks.get(&id).expect("kept")["status"], "completed");
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0]["result"]["action"], "accept");
        assert_eq!(replies[0]["result"]["_meta"][META_RELATED_TASK]["taskId"], id);
    }

    #[test]
    fn cancel_is_final_and_names_the_form_to_withdraw() {
        let mut tasks = Tasks::default();
        let (id, _) = tasks.create(now(), 7, None).expect("room");
        tasks.set_form(&id, Form::Broker(3));
        let (json, form, _) = tasks.cancel(now(), &id).expect("cancelled");
        assert_eq!(json["status"], "cancelled");
        assert_eq!(form, Form::Broker(3));
        assert_eq!(tasks.cancel(now(), &id), Err(CancelRefused::Ended));
        // A late answer does not undo the cancellation.
        tasks.finish(now(), &id, End::Result(json!({"action": "accept"})));
        assert_eq!(tasks.get(&id).expect("kept")["status"], "cancelled");
        assert_eq!(
            tasks.cancel(now(), "elicitd-task-nope"),
            Err(CancelRefused::Unknown)
        );
    }

    #[test]
    fn the_number_of_tasks_is_bounded_and_ended_ones_expire() {
        let mut tasks = Tasks::default();
        let ids: Vec<String> = (0..MAX_TASKS)
            .map(|_| tasks.create(now(), 7, Some(0)).expect("room").0)
            .collect();
        assert!(tasks.create(now(), 7, Some(0)).is_none(), "full");
        // Ended, with a TTL of 0: forgotten at the next creation.
        tasks.finish(now(), &ids[0], End::Cancelled);
        assert!(tasks.create(now(), 7, Some(0)).is_some());
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
}
