//! 2026-07-28 multi round-trip requests: a `tools/call`, `prompts/get` or
//! `resources/read` whose result is `resultType: "input_required"`.
//!
//! The proxy submits every elicitation entry of a round to the broker at
//! once, which shows them one after another (a round that also needs
//! sampling or roots goes to the host whole when the host declared them),
//! retries the same request with a new id, the `inputResponses` and the
//! server's `requestState` unchanged, and gives the host only the final
//! result, under the host's own id.

use std::collections::HashMap;

use elicit_proto::JsonRpcCode;
use serde_json::{Map, Value, json};

use super::fallback::{Decision, check, mode_of};
use super::{AskFor, AskId, Awaiting, Core, Effect, Out, Peer, Reply, Tokens};
use crate::message;

/// Whether a result asks for input.
pub fn is_input_required(response: &Value) -> bool {
    response
        .get("result")
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str)
        == Some("input_required")
}

/// One host request in its rounds.
#[derive(Debug)]
pub(super) struct Round {
    /// The host's id, which the final result carries.
    host_id: Value,
    /// The request as the server saw it; each retry is a copy.
    request: Value,
    /// Its progress token, for the keep-alive.
    token: Option<Value>,
    /// Rounds so far.
    rounds: u32,
    /// Warnings about forms nobody was asked, for the final result.
    warnings: Vec<String>,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// The broker has this round's entries.
    Asking {
        /// The `input_required` response.
        response: Value,
        /// Its entries' keys, in the server's order.
        entries: Vec<String>,
        /// The answers so far, each with its warning when nobody was asked.
        answers: HashMap<String, (Value, Option<String>)>,
        /// The forms still open.
        open: Vec<AskId>,
        /// The round's keep-alive.
        keepalive: AskId,
    },
    /// The server has the retry with this id.
    Retrying(Value),
}

/// Why a multi-round request ends without a result from the server.
#[derive(Debug)]
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

impl Core {
    /// The host's request `key` (its id `host_id`; as the server saw it,
    /// `request`) got its first `input_required` response.
    pub(super) fn start_rounds(
        &mut self,
        key: String,
        host_id: Value,
        request: Value,
        first: Value,
        out: &mut Out,
    ) {
        let token = request
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("progressToken"))
            .cloned();
        let round = Round {
            host_id,
            request,
            token,
            rounds: 0,
            warnings: Vec::new(),
            phase: Phase::Retrying(Value::Null),
        };
        self.rounds.insert(key.clone(), round);
        self.next_round(&key, first, out);
    }

    /// The server's response to the request `key` or to its retry.
    pub(super) fn next_round(&mut self, key: &str, mut response: Value, out: &mut Out) {
        let max = self.config.max_rounds;
        let Some(round) = self.rounds.get_mut(key) else {
            return;
        };
        if !is_input_required(&response) {
            tell_the_host(&mut response, &round.warnings);
            return self.end_round(key, Ok(response), out);
        }
        round.rounds += 1;
        if round.rounds > max {
            let text = format!(
                "the server asked for input more than {max} times for one request; elicit proxy gave up (see --max-rounds)"
            );
            return self.end_round(key, Err(Stop::Fail(JsonRpcCode::INTERNAL_ERROR, text)), out);
        }
        let token = round.token.clone();
        let entries = match self.entries(&response) {
            Ok(entries) => entries,
            Err(Stop::ToHost(_)) => return self.end_round(key, Err(Stop::ToHost(response)), out),
            Err(stop) => return self.end_round(key, Err(stop), out),
        };
        if entries.is_empty() {
            return self.retry(key, &response, Map::new(), out);
        }
        let mut open = Vec::new();
        for (entry, params) in &entries {
            let ask = self.next_id();
            let asked = AskFor::Round {
                host: key.to_owned(),
                entry: entry.clone(),
            };
            self.asks.insert(ask, asked);
            out.ask(ask, params.clone(), None);
            open.push(ask);
        }
        let keepalive = self.next_id();
        self.start_keepalive(keepalive, Tokens::Fixed(token.into_iter().collect()), out);
        if let Some(round) = self.rounds.get_mut(key) {
            round.phase = Phase::Asking {
                response,
                entries: entries.into_iter().map(|(entry, _)| entry).collect(),
                answers: HashMap::new(),
                open,
                keepalive,
            };
        }
    }

    /// The elicitation entries of a round, in the server's order, each
    /// checked before any is shown: a bad one fails the round without a
    /// human seeing half of it.
    fn entries(&self, response: &Value) -> Result<Vec<(String, Value)>, Stop> {
        let requests = response
            .get("result")
            .and_then(|r| r.get("inputRequests"))
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Stop::Fail(
                    JsonRpcCode::INTERNAL_ERROR,
                    "the server asked for input but sent no inputRequests".into(),
                )
            })?;
        let method = |e: &Value| e.get("method").and_then(Value::as_str).unwrap_or("").to_owned();
        // Entries only the host can answer (sampling, roots): the round is
        // the host's when it declared them all, an error otherwise.
        for (key, entry) in requests {
            let name = method(entry);
            if name != "elicitation/create" {
                let host = self.host_caps;
                if requests.values().all(|e| {
                    let m = method(e);
                    m == "elicitation/create" || host.can_serve(&m)
                }) {
                    return Err(Stop::ToHost(Value::Null));
                }
                return Err(Stop::Fail(
                    JsonRpcCode::INTERNAL_ERROR,
                    format!(
                        "the server needs `{name}` from the host (entry `{key}`), which the host did not declare; elicit proxy answers elicitations only"
                    ),
                ));
            }
        }
        let mut entries = Vec::new();
        for (key, entry) in requests {
            let params = entry.get("params").cloned().unwrap_or_else(|| json!({}));
            if let Err(reason) = check(&params, &self.config.limits) {
                return Err(Stop::Fail(
                    JsonRpcCode::INVALID_PARAMS,
                    format!("the server asked for an invalid form (`{key}`): {reason}"),
                ));
            }
            entries.push((key.clone(), params));
        }
        Ok(entries)
    }

    /// The broker's reply to the entry `entry` of the round of `host`.
    pub(super) fn round_reply(&mut self, ask: AskId, host: &str, entry: String, reply: Reply, out: &mut Out) {
        let mode = match self.rounds.get(host).map(|r| &r.phase) {
            Some(Phase::Asking { response, .. }) => {
                let params = &response["result"]["inputRequests"][&entry]["params"];
                mode_of(params).to_owned()
            }
            _ => return,
        };
        let decision = self.decide(reply, &mode, out);
        let Some(Round {
            phase:
                Phase::Asking {
                    response,
                    entries,
                    answers,
                    open,
                    keepalive,
                },
            ..
        }) = self.rounds.get_mut(host)
        else {
            return;
        };
        open.retain(|a| *a != ask);
        let stop = match decision {
            Decision::Result(result) => {
                answers.insert(entry, (result, None));
                None
            }
            Decision::Unasked { result, warning } => {
                answers.insert(entry, (result, Some(warning)));
                None
            }
            Decision::Host => Some(Stop::ToHost(response.clone())),
            Decision::Refused(code, detail) => Some(Stop::Fail(
                code,
                format!("elicitd refused the form `{entry}`: {detail}"),
            )),
            Decision::Withdrawn => Some(Stop::Cancelled),
        };
        if let Some(stop) = stop {
            return self.end_round(host, Err(stop), out);
        }
        if !open.is_empty() {
            return;
        }
        let keepalive = *keepalive;
        let mut responses = Map::new();
        let mut warnings = Vec::new();
        for entry in entries.iter() {
            if let Some((result, warning)) = answers.remove(entry) {
                responses.insert(entry.clone(), result);
                warnings.extend(warning);
            }
        }
        let response = std::mem::take(response);
        if let Some(round) = self.rounds.get_mut(host) {
            round.warnings.extend(warnings);
        }
        self.stop_keepalive(keepalive, out);
        self.retry(host, &response, responses, out);
    }

    /// Sends the request again with a new id, the answers and the server's
    /// `requestState`.
    fn retry(&mut self, key: &str, response: &Value, answers: Map<String, Value>, out: &mut Out) {
        let id = self.fresh_own_id();
        let Some(round) = self.rounds.get_mut(key) else {
            return;
        };
        let mut retry = round.request.clone();
        retry["id"] = id.clone();
        if let Some(params) = retry.get_mut("params").and_then(Value::as_object_mut) {
            params.insert("inputResponses".into(), Value::Object(answers));
            // Echoed exactly as the server sent it, or left out when it
            // sent none.
            match response.get("result").and_then(|r| r.get("requestState")) {
                Some(state) => params.insert("requestState".into(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        round.phase = Phase::Retrying(id.clone());
        self.own
            .insert(message::id_key(&id), Awaiting::Retry(key.to_owned()));
        out.send(Peer::Server, retry);
    }

    /// The host cancelled the request `key` (or left): a retry the server
    /// has is cancelled too, the round's forms are withdrawn.
    pub(super) fn cancel_round(&mut self, key: &str, out: &mut Out) {
        let Some(round) = self.rounds.get(key) else {
            return;
        };
        if let Phase::Retrying(id) = &round.phase {
            self.own.remove(&message::id_key(id));
            let note = message::notification(
                "notifications/cancelled",
                json!({"requestId": id, "reason": "the host cancelled the request"}),
            );
            out.send(Peer::Server, note);
        }
        self.end_round(key, Err(Stop::Cancelled), out);
    }

    fn end_round(&mut self, key: &str, ending: Result<Value, Stop>, out: &mut Out) {
        let Some(round) = self.rounds.remove(key) else {
            return;
        };
        self.host_requests.remove(key);
        if let Phase::Asking { open, keepalive, .. } = round.phase {
            // Whatever of the round is still open goes whole.
            for ask in open {
                self.asks.remove(&ask);
                out.0.push(Effect::Withdraw(ask));
            }
            self.stop_keepalive(keepalive, out);
        }
        let host_id = round.host_id;
        match ending {
            Ok(mut last) | Err(Stop::ToHost(mut last)) => {
                last["id"] = host_id;
                out.send(Peer::Host, last);
            }
            Err(Stop::Fail(code, text)) => {
                tracing::warn!(%text, "a multi-round request failed");
                out.send(Peer::Host, message::error(&host_id, code, &text, None));
            }
            Err(Stop::Cancelled) => tracing::info!("the host cancelled a multi-round request"),
        }
    }
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
