//! What happens to each line, from either side.

use elicit_proto::JsonRpcCode;
use serde_json::Value;

use super::cancel::Cancel;
use super::caps::{self, META_CLIENT_INFO, META_SERVER_INFO};
use super::framing::Frame;
use super::message::{self, Kind, Line};
use super::outbox::{ID_PREFIX, Peer};
use super::owner::Owner;
use super::state::{Ctx, HostRequest};
use super::{Prefer, head, legacy, rounds, tasks};

/// Methods whose 2026-07-28 result may ask for input.
const RETRYABLE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Parses a frame; malformed input is logged and, where it carried an id,
/// answered with an error to `from`. `None` means nothing to forward.
fn parse(ctx: &Ctx, from: Peer, frame: Frame) -> Option<(Vec<u8>, Value)> {
    let line = match frame {
        Frame::TooLong { bytes } => {
            tracing::warn!(
                ?from,
                bytes,
                cap = ctx.options.max_line_bytes,
                "dropped a line over the size cap"
            );
            crate::say!("elicit proxy: dropped a {bytes}-byte line from the {from:?} (over the cap)");
            return None;
        }
        Frame::Line(line) => line,
    };
    match message::classify(&line) {
        Line::Blank => None,
        Line::NotJson { error, id } => {
            crate::say!("elicit proxy: dropped a line from the {from:?} that is not JSON: {error}");
            if let Some(id) = id {
                let reply =
                    message::error(&id, JsonRpcCode::PARSE_ERROR, &format!("not JSON: {error}"), None);
                ctx.outbox.send(from, &reply);
            }
            None
        }
        Line::NotJsonRpc { id } => {
            crate::say!("elicit proxy: dropped a line from the {from:?} that is not a JSON-RPC message");
            if let Some(id) = id {
                let reply = message::error(
                    &id,
                    JsonRpcCode::INVALID_REQUEST,
                    "not a JSON-RPC 2.0 message",
                    None,
                );
                ctx.outbox.send(from, &reply);
            }
            None
        }
        Line::Message { value, .. } => Some((line, value)),
    }
}

/// One frame from the host.
pub fn from_host(ctx: &Ctx, frame: Frame) {
    let Some((line, mut value)) = parse(ctx, Peer::Host, frame) else {
        return;
    };
    match message::kind(&value) {
        Kind::Request => host_request(ctx, line, &mut value),
        Kind::Notification => {
            if message::method(&value) == Some("notifications/cancelled")
                && let Some(id) = value.get("params").and_then(|p| p.get("requestId"))
            {
                ctx.host_cancelled(&Owner::Request(message::id_key(id)));
            }
            ctx.outbox.raw(Peer::Server, line);
        }
        Kind::Response => {
            if ctx.outbox.deliver(value).is_some() {
                ctx.outbox.raw(Peer::Server, line);
            }
        }
        Kind::Invalid => {}
    }
}

fn host_request(ctx: &Ctx, line: Vec<u8>, value: &mut Value) {
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
        ctx.host_cancelled(&Owner::Task(task.to_owned()));
    }
    if method == "logging/setLevel"
        && let Some(level) = value
            .get("params")
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
    {
        ctx.state().host_log_level = Some(level.to_owned());
    }
    if method == "initialize" {
        let (host, rewritten) = caps::rewrite_initialize(value);
        changed = rewritten;
        let info = value.get("params").and_then(|p| p.get("clientInfo")).cloned();
        remember_host(ctx, host, info.as_ref());
        ctx.state().initialize_ids.insert(key.clone());
    } else if let Some((host, rewritten)) = caps::rewrite_modern(value) {
        changed = rewritten;
        let info = caps::modern_meta(value)
            .and_then(|m| m.get(META_CLIENT_INFO))
            .cloned();
        remember_host(ctx, host, info.as_ref());
        if RETRYABLE.contains(&method.as_str()) {
            retryable = Some(value.clone());
        }
    }
    let progress_token = value
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .cloned();
    ctx.state().host_requests.insert(
        key,
        HostRequest {
            progress_token,
            retryable,
            cancel: Cancel::new(),
        },
    );
    if changed {
        ctx.outbox.send(Peer::Server, value);
    } else {
        ctx.outbox.raw(Peer::Server, line);
    }
}

fn remember_host(ctx: &Ctx, host: caps::HostCaps, info: Option<&Value>) {
    ctx.state().host_caps = host;
    if crate::parent::is_placeholder(info)
        && let Some(process) = &ctx.options.host_process
    {
        // A library's default name tells the user nothing; the process
        // that started the proxy does.
        ctx.with_origin(|origin| {
            origin.host = Some(process.clone());
            origin.host_version = None;
        });
        return;
    }
    if let Some(info) = info {
        ctx.with_origin(|origin| {
            origin.host = info.get("name").and_then(Value::as_str).map(str::to_owned);
            origin.host_version = info.get("version").and_then(Value::as_str).map(str::to_owned);
        });
    }
}

fn remember_server(ctx: &Ctx, info: Option<&Value>) {
    if let Some(name) = info.and_then(|i| i.get("name")).and_then(Value::as_str) {
        let version = info.and_then(|i| i.get("version")).and_then(Value::as_str);
        ctx.with_origin(|origin| {
            origin.server = Some(name.to_owned());
            origin.server_version = version.map(str::to_owned);
        });
    }
}

/// One frame from the server.
pub fn from_server(ctx: &Ctx, frame: Frame) {
    if let Frame::Line(line) = &frame
        && let Some(id) = head::plain_result_id(line)
        && !is_special(ctx, &id)
    {
        ctx.state().host_requests.remove(&message::id_key(&id));
        if let Frame::Line(line) = frame {
            ctx.outbox.raw(Peer::Host, line);
        }
        return;
    }
    let Some((line, value)) = parse(ctx, Peer::Server, frame) else {
        return;
    };
    match message::kind(&value) {
        Kind::Response => server_response(ctx, line, value),
        Kind::Request => {
            let method = message::method(&value).unwrap_or("");
            if method == "elicitation/create" {
                legacy::on_request(ctx, line, &value);
            } else if !(method.starts_with("tasks/") && tasks::on_request(ctx, &value)) {
                ctx.outbox.raw(Peer::Host, line);
            }
        }
        Kind::Notification => {
            let consumed = match message::method(&value) {
                Some("notifications/cancelled") => legacy::on_cancelled(ctx, &value),
                Some("notifications/elicitation/complete") => legacy::on_complete(ctx, &value),
                _ => false,
            };
            if !consumed {
                ctx.outbox.raw(Peer::Host, line);
            }
        }
        Kind::Invalid => {}
    }
}

/// Whether a response with this id concerns the proxy itself: one to its
/// own request, or to the host's `initialize` (which names the server).
fn is_special(ctx: &Ctx, id: &Value) -> bool {
    id.as_str().is_some_and(|id| id.starts_with(ID_PREFIX))
        || ctx.state().initialize_ids.contains(&message::id_key(id))
}

fn server_response(ctx: &Ctx, line: Vec<u8>, value: Value) {
    let server_info = value
        .get("result")
        .and_then(|r| r.get("_meta"))
        .and_then(|m| m.get(META_SERVER_INFO))
        .cloned();
    remember_server(ctx, server_info.as_ref());
    let Some(id) = message::id(&value).cloned() else {
        return;
    };
    let key = message::id_key(&id);
    if ctx.state().initialize_ids.remove(&key) {
        let info = value.get("result").and_then(|r| r.get("serverInfo")).cloned();
        remember_server(ctx, info.as_ref());
    }
    let Some(value) = ctx.outbox.deliver(value) else {
        return;
    };
    let request = ctx.state().host_requests.remove(&key);
    let host = ctx.state().host_caps;
    let prefer_host = ctx.options.prefer == Prefer::Host;
    if rounds::is_input_required(&value)
        && let Some(request) = &request
        && let Some(original) = &request.retryable
        && !(prefer_host && host.form)
    {
        // Keep the entry: the host's cancellation must still find it.
        ctx.state().host_requests.insert(key, request.clone());
        rounds::start(ctx, id, original.clone(), value, request.cancel.clone());
        return;
    }
    let url_required = value
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
        == Some(JsonRpcCode::URL_ELICITATION_REQUIRED);
    if url_required && !(prefer_host && host.url) {
        legacy::on_url_required(ctx, line, &value);
        return;
    }
    ctx.outbox.raw(Peer::Host, line);
}
