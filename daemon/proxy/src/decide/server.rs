//! The server's lines: the few the proxy acts on, and the rest passed on
//! byte for byte.

use chrono::{DateTime, Utc};
use elicit_proto::JsonRpcCode;
use serde_json::Value;

use super::{Core, Effect, ID_PREFIX, OriginChange, Out, Peer, rounds};
use crate::caps::META_SERVER_INFO;
use crate::framing::Frame;
use crate::head;
use crate::message::{self, Kind};
use crate::{Prefer, decide::tasks};

impl Core {
    pub(super) fn server_line(&mut self, now: DateTime<Utc>, frame: Frame, out: &mut Out) {
        // Most lines are results the proxy only passes on: read no further
        // than their envelope.
        if let Frame::Line(line) = &frame
            && let Some(id) = head::plain_result_id(line)
            && !self.is_special(&id)
        {
            let key = message::id_key(&id);
            self.host_requests.remove(&key);
            if let Frame::Line(line) = frame {
                out.raw(Peer::Host, line);
            }
            self.request_ended(&key, false, out);
            return;
        }
        let Some((line, value)) = self.parse(Peer::Server, frame, out) else {
            return;
        };
        match message::kind(&value) {
            Kind::Response => self.server_response(now, line, value, out),
            Kind::Request => {
                let method = message::method(&value).unwrap_or("");
                if method == "elicitation/create" {
                    self.elicitation_request(now, line, &value, out);
                } else if !(method.starts_with("tasks/") && self.task_request(now, &value, out)) {
                    out.raw(Peer::Host, line);
                }
            }
            Kind::Notification => {
                let consumed = match message::method(&value) {
                    Some("notifications/cancelled") => self.server_cancelled(&value, out),
                    Some("notifications/elicitation/complete") => self.url_complete(&value),
                    _ => false,
                };
                if !consumed {
                    out.raw(Peer::Host, line);
                }
            }
            Kind::Invalid => {}
        }
    }

    /// Whether a response with this id concerns the proxy itself: one to
    /// its own request, or to the host's `initialize` (which names the
    /// server).
    fn is_special(&self, id: &Value) -> bool {
        id.as_str().is_some_and(|id| id.starts_with(ID_PREFIX))
            || self.initialize_ids.contains(&message::id_key(id))
    }

    fn remember_server(info: Option<&Value>, out: &mut Out) {
        if let Some(name) = info.and_then(|i| i.get("name")).and_then(Value::as_str) {
            let version = info.and_then(|i| i.get("version")).and_then(Value::as_str);
            out.0.push(Effect::Origin(OriginChange::Server {
                name: name.to_owned(),
                version: version.map(str::to_owned),
            }));
        }
    }

    fn server_response(&mut self, now: DateTime<Utc>, line: Vec<u8>, value: Value, out: &mut Out) {
        let server_info = value
            .get("result")
            .and_then(|r| r.get("_meta"))
            .and_then(|m| m.get(META_SERVER_INFO));
        Self::remember_server(server_info, out);
        let Some(id) = message::id(&value).cloned() else {
            return;
        };
        let key = message::id_key(&id);
        if self.initialize_ids.remove(&key) {
            let info = value.get("result").and_then(|r| r.get("serverInfo"));
            Self::remember_server(info, out);
        }
        if self.own_response(now, value.clone(), out) {
            return;
        }
        let request = self.host_requests.remove(&key);
        let host = self.host_caps;
        let prefer_host = self.config.prefer == Prefer::Host;
        if rounds::is_input_required(&value)
            && let Some(request) = request
            && let Some(original) = request.retryable.clone()
            && !(prefer_host && host.form)
        {
            // Keep the entry: the host's cancellation must still find it,
            // and its progress token is still open.
            self.host_requests.insert(key.clone(), request);
            self.start_rounds(key, id, original, value, out);
            return;
        }
        self.request_ended(&key, false, out);
        let url_required = value
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
            == Some(JsonRpcCode::URL_ELICITATION_REQUIRED);
        if url_required && !(prefer_host && host.url) {
            self.url_required(line, &value, out);
            return;
        }
        out.raw(Peer::Host, line);
    }

    /// A server request about tasks; true when it concerned the proxy's
    /// tasks and was answered here.
    fn task_request(&mut self, now: DateTime<Utc>, request: &Value, out: &mut Out) -> bool {
        let (Some(method), Some(id)) = (message::method(request), message::id(request)) else {
            return false;
        };
        let task = request
            .get("params")
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .filter(|t| t.starts_with(tasks::ID_PREFIX))
            .map(str::to_owned);
        match (method, task) {
            ("tasks/list", _) => {
                let list = self.tasks.list();
                if list.is_empty() {
                    return false;
                }
                out.send(
                    Peer::Server,
                    message::result(id, serde_json::json!({"tasks": list})),
                );
            }
            ("tasks/get", Some(task)) => {
                let reply = match self.tasks.get(&task) {
                    Some(json) => message::result(id, json),
                    None => tasks::unknown(id),
                };
                out.send(Peer::Server, reply);
            }
            ("tasks/cancel", Some(task)) => self.server_cancels_task(now, id, &task, out),
            ("tasks/result", Some(task)) => {
                if let Some(reply) = self.tasks.result_or_wait(id, &task) {
                    out.send(Peer::Server, reply);
                }
            }
            _ => return false,
        }
        true
    }
}
