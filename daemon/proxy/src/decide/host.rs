//! The host's lines: parsing, the capability rewrite per era, the host's
//! cancellations and its answers to the proxy's own requests.

use elicit_proto::JsonRpcCode;
use serde_json::Value;

use super::{Awaiting, Core, HostRequest, ID_PREFIX, OriginChange, Out, Peer};
use crate::caps::{self, META_CLIENT_INFO};
use crate::framing::Frame;
use crate::message::{self, Kind, Line};

/// Methods whose 2026-07-28 result may ask for input.
const RETRYABLE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

impl Core {
    /// Parses a frame; malformed input is logged and, where it carried an
    /// id, answered with an error to `from`. `None` means nothing to
    /// forward.
    pub(super) fn parse(&self, from: Peer, frame: Frame, out: &mut Out) -> Option<(Vec<u8>, Value)> {
        let line = match frame {
            Frame::TooLong { bytes } => {
                tracing::warn!(
                    ?from,
                    bytes,
                    cap = self.config.max_line_bytes,
                    "dropped a line over the size cap"
                );
                out.say(format!(
                    "elicit proxy: dropped a {bytes}-byte line from the {from:?} (over the cap)"
                ));
                return None;
            }
            Frame::Line(line) => line,
        };
        match message::classify(&line) {
            Line::Blank => None,
            Line::NotJson { error, id } => {
                out.say(format!(
                    "elicit proxy: dropped a line from the {from:?} that is not JSON: {error}"
                ));
                if let Some(id) = id {
                    let text = format!("not JSON: {error}");
                    out.send(from, message::error(&id, JsonRpcCode::PARSE_ERROR, &text, None));
                }
                None
            }
            Line::NotJsonRpc { id } => {
                out.say(format!(
                    "elicit proxy: dropped a line from the {from:?} that is not a JSON-RPC message"
                ));
                if let Some(id) = id {
                    let text = "not a JSON-RPC 2.0 message";
                    out.send(
                        from,
                        message::error(&id, JsonRpcCode::INVALID_REQUEST, text, None),
                    );
                }
                None
            }
            Line::Message { value, .. } => Some((line, value)),
        }
    }

    pub(super) fn host_line(&mut self, now: chrono::DateTime<chrono::Utc>, frame: Frame, out: &mut Out) {
        let Some((line, mut value)) = self.parse(Peer::Host, frame, out) else {
            return;
        };
        match message::kind(&value) {
            Kind::Request => self.host_request(line, &mut value, out),
            Kind::Notification => {
                if message::method(&value) == Some("notifications/cancelled")
                    && let Some(id) = value.get("params").and_then(|p| p.get("requestId"))
                {
                    self.host_cancelled_request(&message::id_key(id), out);
                }
                out.raw(Peer::Server, line);
            }
            Kind::Response => {
                if !self.own_response(now, value, out) {
                    out.raw(Peer::Server, line);
                }
            }
            Kind::Invalid => {}
        }
    }

    /// Routes a response to a request of the proxy's own; false when it
    /// belongs to someone else. A late answer to a request the proxy
    /// forgot is swallowed: the peer never asked for it.
    pub(super) fn own_response(
        &mut self,
        now: chrono::DateTime<chrono::Utc>,
        response: Value,
        out: &mut Out,
    ) -> bool {
        let Some(id) = message::id(&response) else {
            return false;
        };
        if !id.as_str().is_some_and(|s| s.starts_with(ID_PREFIX)) {
            return false;
        }
        match self.own.remove(&message::id_key(id)) {
            Some(Awaiting::Retry(host)) => self.next_round(&host, response, out),
            Some(Awaiting::HostForm(task)) => self.host_answered_task(now, &task, &response, out),
            None => {}
        }
        true
    }

    fn host_request(&mut self, line: Vec<u8>, value: &mut Value, out: &mut Out) {
        let Some(id) = message::id(value).cloned() else {
            return;
        };
        let key = message::id_key(&id);
        let method = message::method(value).unwrap_or("").to_owned();
        let mut changed = false;
        let mut retryable = None;
        if method == "tasks/cancel"
            && let Some(task) = value
                .get("params")
                .and_then(|p| p.get("taskId"))
                .and_then(Value::as_str)
        {
            self.host_cancelled_task(task, out);
        }
        if method == "logging/setLevel"
            && let Some(level) = value
                .get("params")
                .and_then(|p| p.get("level"))
                .and_then(Value::as_str)
        {
            self.host_log_level = Some(level.to_owned());
        }
        if method == "initialize" {
            let (host, rewritten) = caps::rewrite_initialize(value);
            changed = rewritten;
            let info = value.get("params").and_then(|p| p.get("clientInfo")).cloned();
            self.remember_host(host, info.as_ref(), out);
            self.initialize_ids.insert(key.clone());
        } else if let Some((host, rewritten)) = caps::rewrite_modern(value) {
            changed = rewritten;
            let info = caps::modern_meta(value)
                .and_then(|m| m.get(META_CLIENT_INFO))
                .cloned();
            self.remember_host(host, info.as_ref(), out);
            if RETRYABLE.contains(&method.as_str()) {
                retryable = Some(value.clone());
            }
        }
        let progress_token = value
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("progressToken"))
            .cloned();
        self.host_requests.insert(
            key,
            HostRequest {
                progress_token,
                retryable,
            },
        );
        if changed {
            out.send(Peer::Server, value.clone());
        } else {
            out.raw(Peer::Server, line);
        }
    }

    fn remember_host(&mut self, host: caps::HostCaps, info: Option<&Value>, out: &mut Out) {
        self.host_caps = host;
        if crate::parent::is_placeholder(info)
            && let Some(process) = &self.config.host_process
        {
            // A library's default name tells the user nothing; the process
            // that started the proxy does.
            out.0.push(super::Effect::Origin(OriginChange::Host {
                name: Some(process.clone()),
                version: None,
            }));
            return;
        }
        if let Some(info) = info {
            let text = |field: &str| info.get(field).and_then(Value::as_str).map(str::to_owned);
            out.0.push(super::Effect::Origin(OriginChange::Host {
                name: text("name"),
                version: text("version"),
            }));
        }
    }
}
