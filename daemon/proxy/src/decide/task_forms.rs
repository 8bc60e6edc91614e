//! What the relay does with the forms of its tasks: asks them of the
//! broker (or of the host, when elicitd cannot be reached), records how
//! they ended, and withdraws them when the task is cancelled.

use chrono::{DateTime, Utc};
use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::fallback::{Decision, mode_of};
use super::tasks::{CancelRefused, End, Form, MAX_TASKS, unknown};
use super::{AskFor, AskId, Awaiting, Core, Effect, Out, Peer, Reply, Tokens};
use crate::message;

impl Core {
    /// Serves the server's task-augmented `elicitation/create` `id` as a
    /// task; false when the proxy keeps too many tasks, and the caller
    /// answers it synchronously.
    pub(super) fn start_task(
        &mut self,
        now: DateTime<Utc>,
        id: &Value,
        params: &Value,
        ttl_ms: Option<u64>,
        out: &mut Out,
    ) -> bool {
        let Some((task, json)) = self.tasks.create(now, self.config.pid, ttl_ms) else {
            tracing::warn!(
                max = MAX_TASKS,
                "too many tasks; answering an elicitation synchronously"
            );
            return false;
        };
        out.send(Peer::Server, message::result(id, json!({"task": json})));
        let mut plain = params.clone();
        if let Some(params) = plain.as_object_mut() {
            params.remove("task");
        }
        // The broker counts whole seconds; a TTL below one still gets one.
        let timeout_secs = ttl_ms.map(|ms| ms.div_ceil(1000).max(1));
        let ask = self.next_id();
        self.tasks.set_form(&task, Form::Broker(ask));
        let asked = AskFor::Task {
            task,
            params: plain.clone(),
        };
        self.asks.insert(ask, asked);
        out.ask(ask, plain, timeout_secs);
        self.start_keepalive(ask, Tokens::Open, out);
        true
    }

    /// The broker's reply to the form of `task`.
    pub(super) fn task_reply(
        &mut self,
        now: DateTime<Utc>,
        ask: AskId,
        task: String,
        params: Value,
        reply: Reply,
        out: &mut Out,
    ) {
        self.stop_keepalive(ask, out);
        let end = match self.decide(reply, mode_of(&params), out) {
            Decision::Result(result) | Decision::Unasked { result, .. } => End::Result(result),
            Decision::Host => return self.ask_host(&task, params, out),
            Decision::Refused(code, detail) => End::Error(json!({
                "code": code,
                "message": format!("elicitd refused the elicitation: {detail}"),
            })),
            Decision::Withdrawn => End::Cancelled,
        };
        self.finish_task(now, &task, end, out);
    }

    /// The no-broker fallback gave the form to the host: it is asked as a
    /// plain elicitation (the task stays the proxy's), under an id of the
    /// proxy's own.
    fn ask_host(&mut self, task: &str, params: Value, out: &mut Out) {
        let id = self.fresh_own_id();
        let request = message::request(&id, "elicitation/create", params);
        self.own
            .insert(message::id_key(&id), Awaiting::HostForm(task.to_owned()));
        out.send(Peer::Host, request);
        if self.tasks.ended(task) {
            // Cancelled while the broker was being tried.
            self.withdraw_task_form(Form::Host(id), out);
        } else {
            self.tasks.set_form(task, Form::Host(id));
        }
    }

    /// The host's answer to the form of `task`.
    pub(super) fn host_answered_task(
        &mut self,
        now: DateTime<Utc>,
        task: &str,
        response: &Value,
        out: &mut Out,
    ) {
        let end = match (response.get("result"), response.get("error")) {
            (Some(result), _) => End::Result(result.clone()),
            (None, Some(error)) => End::Error(error.clone()),
            (None, None) => End::Error(
                json!({"code": JsonRpcCode::INTERNAL_ERROR, "message": "the host's answer was empty"}),
            ),
        };
        self.finish_task(now, task, end, out);
    }

    fn finish_task(&mut self, now: DateTime<Utc>, task: &str, end: End, out: &mut Out) {
        for reply in self.tasks.finish(now, task, end) {
            out.send(Peer::Server, reply);
        }
    }

    /// The server's `tasks/cancel` `id` of `task`.
    pub(super) fn server_cancels_task(&mut self, now: DateTime<Utc>, id: &Value, task: &str, out: &mut Out) {
        match self.tasks.cancel(now, task) {
            Ok((json, form, replies)) => {
                out.send(Peer::Server, message::result(id, json));
                for reply in replies {
                    out.send(Peer::Server, reply);
                }
                self.withdraw_task_form(form, out);
            }
            Err(CancelRefused::Unknown) => out.send(Peer::Server, unknown(id)),
            Err(CancelRefused::Ended) => out.send(
                Peer::Server,
                message::error(
                    id,
                    JsonRpcCode::INVALID_PARAMS,
                    "the task has ended already",
                    None,
                ),
            ),
        }
    }

    /// Withdraws a task's form wherever it is.
    fn withdraw_task_form(&mut self, form: Form, out: &mut Out) {
        match form {
            Form::None => {}
            Form::Broker(ask) => out.0.push(Effect::Withdraw(ask)),
            Form::Host(id) => {
                self.own.remove(&message::id_key(&id));
                let note = message::notification("notifications/cancelled", json!({"requestId": id}));
                out.send(Peer::Host, note);
            }
        }
    }

    /// Withdraws the form of every task still waiting (the host left); a
    /// form the broker has ends its task when the broker confirms.
    pub(super) fn cancel_all_tasks(&mut self, now: DateTime<Utc>, out: &mut Out) {
        for (task, form) in self.tasks.open() {
            let by_host = matches!(form, Form::Host(_));
            self.withdraw_task_form(form, out);
            if by_host {
                self.finish_task(now, &task, End::Cancelled, out);
            }
        }
    }
}
