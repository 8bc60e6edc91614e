//! 2026-07-28 multi round-trip requests: a `tools/call`, `prompts/get` or
//! `resources/read` whose result is `resultType: "input_required"`.
//!
//! The proxy submits every elicitation entry of a round to the broker at
//! once, which shows them one after another (a round that also needs sampling or roots
//! goes to the host whole when the host declared them), retries the same request with a new id, the
//! `inputResponses` and the server's `requestState` unchanged, and gives
//! the host only the final result, under the host's own id.

use elicit_proto::JsonRpcCode;
use serde_json::{Map, Value, json};

use super::ask::{self, Decision};
use super::cancel::Cancel;
use super::keepalive;
use super::message;
use super::outbox::Peer;
use super::state::Ctx;

/// Whether a result asks for input.
pub fn is_input_required(response: &Value) -> bool {
    response
        .get("result")
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str)
        == Some("input_required")
}

/// Why a multi-round request ends without a result from the server.
enum Stop {
    /// Answer the host with this error.
    Fail(i64, String),
    /// The host cancelled: it gets nothing.
    Cancelled,
    /// The host answers this round itself (it declared what the round
    /// needs, and elicitd cannot take it): the `input_required` result goes
    /// to the host, whose own retry then passes through.
    ToHost(Value),
}

/// Runs the rounds of the host's request `host_id` (as the server saw it:
/// `request`), starting from the first `input_required` response.
pub fn start(ctx: &Ctx, host_id: Value, request: Value, first: Value, cancel: Cancel) {
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let outcome = run(&ctx, &request, first, &cancel).await;
        ctx.state().host_requests.remove(&message::id_key(&host_id));
        match outcome {
            Ok(mut last) => {
                last["id"] = host_id;
                ctx.outbox.send(Peer::Host, &last);
            }
            Err(Stop::Fail(code, text)) => {
                tracing::warn!(%text, "a multi-round request failed");
                ctx.outbox
                    .send(Peer::Host, &message::error(&host_id, code, &text, None));
            }
            Err(Stop::Cancelled) => tracing::info!("the host cancelled a multi-round request"),
            Err(Stop::ToHost(mut round)) => {
                round["id"] = host_id;
                ctx.outbox.send(Peer::Host, &round);
            }
        }
    });
}

async fn run(ctx: &Ctx, request: &Value, first: Value, cancel: &Cancel) -> Result<Value, Stop> {
    let token = request
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .cloned();
    let mut response = first;
    let mut round = 0u32;
    let mut warnings = Vec::new();
    while is_input_required(&response) {
        round += 1;
        if round > ctx.options.max_rounds {
            return Err(Stop::Fail(
                JsonRpcCode::INTERNAL_ERROR,
                format!(
                    "the server asked for input more than {} times for one request; elicit proxy gave up (see --max-rounds)",
                    ctx.options.max_rounds
                ),
            ));
        }
        let result = response.get("result").cloned().unwrap_or(Value::Null);
        let (answers, unasked) = match answer_round(ctx, &result, cancel, &token).await {
            Err(Stop::ToHost(_)) => return Err(Stop::ToHost(response)),
            other => other?,
        };
        warnings.extend(unasked);
        let mut retry = request.clone();
        let id = ctx.outbox.fresh_id();
        retry["id"] = id.clone();
        if let Some(params) = retry.get_mut("params").and_then(Value::as_object_mut) {
            params.insert("inputResponses".into(), Value::Object(answers));
            // Echoed exactly as the server sent it, or left out when it
            // sent none.
            match result.get("requestState") {
                Some(state) => params.insert("requestState".into(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        let reply = ctx.outbox.request(Peer::Server, &retry);
        response = tokio::select! {
            reply = reply => reply.map_err(|_| Stop::Fail(JsonRpcCode::INTERNAL_ERROR, "the server went away during a retry".into()))?,
            () = cancel.cancelled() => {
                ctx.outbox.forget(&id);
                let note = message::notification(
                    "notifications/cancelled",
                    json!({"requestId": id, "reason": "the host cancelled the request"}),
                );
                ctx.outbox.send(Peer::Server, &note);
                return Err(Stop::Cancelled);
            }
        };
    }
    tell_the_host(&mut response, &warnings);
    Ok(response)
}

/// Adds each warning about a form nobody was asked to the final result's
/// `content` (a tool result's), where the host's model and user read it:
/// in this era the proxy holds the result the host gets.
fn tell_the_host(response: &mut Value, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    let Some(content) = response
        .get_mut("result")
        .and_then(|r| r.get_mut("content"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for warning in warnings {
        content.push(json!({"type": "text", "text": warning}));
    }
}

/// Answers every entry of one round, in the order the server listed them,
/// with a warning for each that nobody was asked.
async fn answer_round(
    ctx: &Ctx,
    result: &Value,
    cancel: &Cancel,
    token: &Option<Value>,
) -> Result<(Map<String, Value>, Vec<String>), Stop> {
    let Some(requests) = result.get("inputRequests").and_then(Value::as_object) else {
        return Err(Stop::Fail(
            JsonRpcCode::INTERNAL_ERROR,
            "the server asked for input but sent no inputRequests".into(),
        ));
    };
    // Entries only the host can answer (sampling, roots): the round is the
    // host's when it declared them all, an error otherwise.
    let host = ctx.state().host_caps;
    for (key, entry) in requests {
        let method = entry.get("method").and_then(Value::as_str).unwrap_or("");
        if method != "elicitation/create" {
            if requests.values().all(|e| {
                let m = e.get("method").and_then(Value::as_str).unwrap_or("");
                m == "elicitation/create" || host.can_serve(m)
            }) {
                return Err(Stop::ToHost(Value::Null));
            }
            return Err(Stop::Fail(
                JsonRpcCode::INTERNAL_ERROR,
                format!(
                    "the server needs `{method}` from the host (entry `{key}`), which the host did not declare; elicit proxy answers elicitations only"
                ),
            ));
        }
    }
    // Every entry is checked before any is shown: a bad one fails the
    // round without a human seeing half of it.
    for (key, entry) in requests {
        let params = entry.get("params").cloned().unwrap_or_else(|| json!({}));
        if let Err(reason) = ask::check(&params, &ctx.options.limits) {
            return Err(Stop::Fail(
                JsonRpcCode::INVALID_PARAMS,
                format!("the server asked for an invalid form (`{key}`): {reason}"),
            ));
        }
    }
    // All entries go to the broker at once, in the server's order: it
    // queues them durably and shows them one after another. When one
    // fails, the round is withdrawn whole.
    let round = Cancel::new();
    let asks = requests.iter().map(|(key, entry)| {
        let params = entry.get("params").cloned().unwrap_or_else(|| json!({}));
        let round = &round;
        async move {
            match ask::ask(ctx, &params, round, Vec::new).await {
                Decision::Result(result) => Ok((key.clone(), result, None)),
                Decision::Unasked { result, warning } => Ok((key.clone(), result, Some(warning))),
                Decision::Host => Err(Stop::ToHost(Value::Null)),
                Decision::Invalid(reason) => Err(Stop::Fail(
                    JsonRpcCode::INVALID_PARAMS,
                    format!("the server asked for an invalid form (`{key}`): {reason}"),
                )),
                Decision::Refused(error) => Err(Stop::Fail(
                    error.jsonrpc_code(),
                    format!("elicitd refused the form `{key}`: {}", error.detail()),
                )),
                Decision::Withdrawn => Err(Stop::Cancelled),
            }
        }
    });
    let tokens = || token.iter().cloned().collect::<Vec<_>>();
    let answered = tokio::select! {
        answered = futures_util::future::try_join_all(asks) => answered,
        () = cancel.cancelled() => Err(Stop::Cancelled),
        () = keepalive::run(ctx.outbox.clone(), ctx.options.keepalive, tokens) => Err(Stop::Cancelled),
    };
    // Withdraws whatever of the round is still open (nothing, when every
    // entry was answered).
    round.cancel();
    let mut answers = Map::new();
    let mut warnings = Vec::new();
    for (key, result, warning) in answered? {
        answers.insert(key, result);
        warnings.extend(warning);
    }
    Ok((answers, warnings))
}
