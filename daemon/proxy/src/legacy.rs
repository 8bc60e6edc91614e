//! 2025-era elicitation: the server's `elicitation/create` requests, their
//! cancellation, `notifications/elicitation/complete`, and the -32042
//! "URL elicitation required" error.

use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::Prefer;
use super::ask::{self, Decision};
use super::cancel::Cancel;
use super::message;
use super::outbox::Peer;
use super::owner;
use super::state::{Ctx, ServerElicitation};
use super::tasks;

/// Handles the server's `elicitation/create` (`line` is the raw line).
pub fn on_request(ctx: &Ctx, line: Vec<u8>, request: &Value) {
    let Some(id) = message::id(request).cloned() else {
        return;
    };
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let mode = ask::mode_of(&params).to_owned();
    let key = message::id_key(&id);
    let host_can = ctx.state().host_caps.can_elicit(&mode);
    let owner = owner::owner_of(&params, ctx.state().host_requests.keys());
    if ctx.options.prefer == Prefer::Host && host_can {
        ctx.state().server_elicitations.insert(
            key,
            ServerElicitation {
                cancel: Cancel::new(),
                forwarded: true,
                owner,
                by_host: false,
            },
        );
        ctx.outbox.raw(Peer::Host, line);
        return;
    }
    // A bad request is answered at once and never reaches the user.
    if let Err(reason) = ask::check(&params, &ctx.options.limits) {
        tracing::warn!(%reason, "refused an elicitation that is outside the MCP subset");
        let error = message::error(
            &id,
            JsonRpcCode::INVALID_PARAMS,
            &format!("elicitd refused the elicitation: {reason}"),
            None,
        );
        ctx.outbox.send(Peer::Server, &error);
        return;
    }
    // The host declared task-augmented elicitation and the proxy passed
    // that on: such a request gets a task.
    if let Some(ttl_ms) = tasks::requested(&params)
        && tasks::start(ctx, &id, &params, ttl_ms)
    {
        return;
    }
    let cancel = Cancel::new();
    ctx.state().server_elicitations.insert(
        key.clone(),
        ServerElicitation {
            cancel: cancel.clone(),
            forwarded: false,
            owner,
            by_host: false,
        },
    );
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let tokens = {
            let ctx = ctx.clone();
            move || ctx.open_progress_tokens()
        };
        let decision = ask::ask(&ctx, &params, &cancel, tokens).await;
        match decision {
            Decision::Result(result) | Decision::Unasked { result, .. } => {
                if mode == "url"
                    && let Some(eid) = params.get("elicitationId").and_then(Value::as_str)
                {
                    ctx.state().handled_url_ids.insert(eid.to_owned());
                }
                ctx.state().server_elicitations.remove(&key);
                ctx.outbox.send(Peer::Server, &message::result(&id, result));
            }
            Decision::Host => {
                if let Some(e) = ctx.state().server_elicitations.get_mut(&key) {
                    e.forwarded = true;
                }
                ctx.outbox.raw(Peer::Host, line);
            }
            Decision::Invalid(reason) => {
                ctx.state().server_elicitations.remove(&key);
                let text = format!("elicitd refused the elicitation: {reason}");
                let error = message::error(&id, JsonRpcCode::INVALID_PARAMS, &text, None);
                ctx.outbox.send(Peer::Server, &error);
            }
            Decision::Refused(error) => {
                ctx.state().server_elicitations.remove(&key);
                let text = format!("elicitd refused the elicitation: {}", error.detail());
                let reply = message::error(&id, error.jsonrpc_code(), &text, None);
                ctx.outbox.send(Peer::Server, &reply);
            }
            // The server cancelled: a cancelled request gets no response.
            // The host cancelled what the form served: the server learns
            // that nobody will answer (it may ignore the cancellation).
            Decision::Withdrawn => {
                let by_host = ctx
                    .state()
                    .server_elicitations
                    .remove(&key)
                    .is_some_and(|e| e.by_host);
                if by_host {
                    let cancelled = json!({"action": "cancel"});
                    ctx.outbox.send(Peer::Server, &message::result(&id, cancelled));
                }
            }
        }
    });
}

/// The server's `notifications/cancelled`: withdraws the form of an
/// elicitation the proxy handles. Returns true when it was consumed.
pub fn on_cancelled(ctx: &Ctx, notification: &Value) -> bool {
    let Some(id) = notification.get("params").and_then(|p| p.get("requestId")) else {
        return false;
    };
    let key = message::id_key(id);
    let mut state = ctx.state();
    match state.server_elicitations.get(&key) {
        Some(e) if e.forwarded => {
            // The host holds it: the notification is for the host.
            state.server_elicitations.remove(&key);
            false
        }
        Some(e) => {
            e.cancel.cancel();
            true
        }
        None => false,
    }
}

/// `notifications/elicitation/complete`: consumed when the proxy answered
/// that URL elicitation (the host never saw it).
pub fn on_complete(ctx: &Ctx, notification: &Value) -> bool {
    let Some(eid) = notification
        .get("params")
        .and_then(|p| p.get("elicitationId"))
        .and_then(Value::as_str)
    else {
        return false;
    };
    let consumed = ctx.state().handled_url_ids.remove(eid);
    if consumed {
        tracing::info!(elicitation = eid, "the server reports a URL elicitation complete");
    }
    consumed
}

/// A -32042 error for a host request: its URL elicitations are shown as
/// URL forms, and the error reaches the host once the user has answered
/// them, so that the host's retry comes after the consent.
pub fn on_url_required(ctx: &Ctx, line: Vec<u8>, response: &Value) {
    let elicitations: Vec<Value> = response
        .get("error")
        .and_then(|e| e.get("data"))
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ctx = ctx.clone();
    tokio::spawn(async move {
        for params in elicitations {
            let cancel = Cancel::new();
            let params = if params.get("mode").is_none() {
                let mut p = params;
                p["mode"] = json!("url");
                p
            } else {
                params
            };
            match ask::ask(&ctx, &params, &cancel, Vec::new).await {
                Decision::Result(result) | Decision::Unasked { result, .. } => {
                    tracing::info!(action = %result["action"], "URL elicitation of a -32042 error answered");
                    if let Some(eid) = params.get("elicitationId").and_then(Value::as_str) {
                        ctx.state().handled_url_ids.insert(eid.to_owned());
                    }
                }
                Decision::Invalid(reason) => {
                    tracing::warn!(%reason, "a -32042 error carried an invalid URL elicitation");
                }
                other => tracing::info!(?other, "URL elicitation of a -32042 error not shown"),
            }
        }
        ctx.outbox.raw(Peer::Host, line);
    });
}
