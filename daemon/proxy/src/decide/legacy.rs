//! 2025-era elicitation: the server's `elicitation/create` requests, their
//! cancellation, `notifications/elicitation/complete`, and the -32042
//! "URL elicitation required" error.

use std::collections::VecDeque;

use chrono::{DateTime, Utc};
use elicit_proto::JsonRpcCode;
use serde_json::{Value, json};

use super::fallback::{Decision, check, mode_of};
use super::{AskFor, AskId, Core, Out, Peer, Reply, ServerElicitation, Tokens, tasks};
use crate::Prefer;
use crate::message;
use crate::owner;

/// A server's `elicitation/create` the broker has.
#[derive(Debug)]
pub(super) struct Form {
    /// The request's id.
    id: Value,
    /// Its mode.
    mode: String,
    /// Its `elicitationId` (URL mode).
    eid: Option<String>,
    /// The request as it came, for the host should it answer after all.
    line: Vec<u8>,
}

/// A -32042 error for a host request, held until its URL forms are
/// answered one after the other.
#[derive(Debug)]
pub(super) struct Consent {
    /// The forms not asked yet.
    waiting: VecDeque<Value>,
    /// The error as it came.
    line: Vec<u8>,
}

impl Core {
    /// The server's `elicitation/create` (`line` is the raw line).
    pub(super) fn elicitation_request(
        &mut self,
        now: DateTime<Utc>,
        line: Vec<u8>,
        request: &Value,
        out: &mut Out,
    ) {
        let Some(id) = message::id(request).cloned() else {
            return;
        };
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let mode = mode_of(&params).to_owned();
        let key = message::id_key(&id);
        let host_can = self.host_caps.can_elicit(&mode);
        let owner = owner::owner_of(&params, self.host_requests.keys());
        if self.config.prefer == Prefer::Host && host_can {
            let forwarded = ServerElicitation {
                ask: None,
                forwarded: true,
                owner,
                by_host: false,
            };
            self.server_elicitations.insert(key, forwarded);
            out.raw(Peer::Host, line);
            return;
        }
        // A bad request is answered at once and never reaches the user.
        if let Err(reason) = check(&params, &self.config.limits) {
            tracing::warn!(%reason, "refused an elicitation that is outside the MCP subset");
            let text = format!("elicitd refused the elicitation: {reason}");
            out.send(
                Peer::Server,
                message::error(&id, JsonRpcCode::INVALID_PARAMS, &text, None),
            );
            return;
        }
        // The host declared task-augmented elicitation and the proxy passed
        // that on: such a request gets a task.
        if let Some(ttl_ms) = tasks::requested(&params)
            && self.start_task(now, &id, &params, ttl_ms, out)
        {
            return;
        }
        let ask = self.next_id();
        let elicitation = ServerElicitation {
            ask: Some(ask),
            forwarded: false,
            owner,
            by_host: false,
        };
        self.server_elicitations.insert(key, elicitation);
        let eid = params
            .get("elicitationId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let form = Form { id, mode, eid, line };
        self.asks.insert(ask, AskFor::Legacy(form));
        out.ask(ask, params, None);
        self.start_keepalive(ask, Tokens::Open, out);
    }

    pub(super) fn legacy_reply(&mut self, ask: AskId, form: Form, reply: Reply, out: &mut Out) {
        self.stop_keepalive(ask, out);
        let key = message::id_key(&form.id);
        let id = &form.id;
        match self.decide(reply, &form.mode, out) {
            Decision::Result(result) | Decision::Unasked { result, .. } => {
                if form.mode == "url"
                    && let Some(eid) = form.eid
                {
                    self.handled_url_ids.insert(eid);
                }
                self.server_elicitations.remove(&key);
                out.send(Peer::Server, message::result(id, result));
            }
            Decision::Host => {
                if let Some(e) = self.server_elicitations.get_mut(&key) {
                    e.forwarded = true;
                    e.ask = None;
                }
                out.raw(Peer::Host, form.line);
            }
            Decision::Refused(code, detail) => {
                self.server_elicitations.remove(&key);
                let text = format!("elicitd refused the elicitation: {detail}");
                out.send(Peer::Server, message::error(id, code, &text, None));
            }
            // The server cancelled: a cancelled request gets no response.
            // The host cancelled what the form served: the server learns
            // that nobody will answer (it may ignore the cancellation).
            Decision::Withdrawn => {
                let by_host = self.server_elicitations.remove(&key).is_some_and(|e| e.by_host);
                if by_host {
                    out.send(Peer::Server, message::result(id, json!({"action": "cancel"})));
                }
            }
        }
    }

    /// The server's `notifications/cancelled`: withdraws the form of an
    /// elicitation the proxy handles. Returns true when it was consumed.
    pub(super) fn server_cancelled(&mut self, notification: &Value, out: &mut Out) -> bool {
        let Some(id) = notification.get("params").and_then(|p| p.get("requestId")) else {
            return false;
        };
        let key = message::id_key(id);
        match self.server_elicitations.get(&key) {
            Some(e) if e.forwarded => {
                // The host holds it: the notification is for the host.
                self.server_elicitations.remove(&key);
                false
            }
            Some(e) => {
                if let Some(ask) = e.ask {
                    out.0.push(super::Effect::Withdraw(ask));
                }
                true
            }
            None => false,
        }
    }

    /// `notifications/elicitation/complete`: consumed when the proxy
    /// answered that URL elicitation (the host never saw it).
    pub(super) fn url_complete(&mut self, notification: &Value) -> bool {
        let Some(eid) = notification
            .get("params")
            .and_then(|p| p.get("elicitationId"))
            .and_then(Value::as_str)
        else {
            return false;
        };
        let consumed = self.handled_url_ids.remove(eid);
        if consumed {
            tracing::info!(elicitation = eid, "the server reports a URL elicitation complete");
        }
        consumed
    }

    /// A -32042 error for a host request: its URL elicitations are shown
    /// as URL forms, and the error reaches the host once the user has
    /// answered them, so that the host's retry comes after the consent.
    pub(super) fn url_required(&mut self, line: Vec<u8>, response: &Value, out: &mut Out) {
        let waiting = response
            .get("error")
            .and_then(|e| e.get("data"))
            .and_then(|d| d.get("elicitations"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let consent = self.next_id();
        let held = Consent {
            waiting: waiting.into(),
            line,
        };
        self.consents.insert(consent, held);
        self.next_consent(consent, out);
    }

    /// Asks the next URL form of `consent`, or lets its error go.
    fn next_consent(&mut self, consent: AskId, out: &mut Out) {
        loop {
            let Some(held) = self.consents.get_mut(&consent) else {
                return;
            };
            let Some(mut params) = held.waiting.pop_front() else {
                break;
            };
            if params.get("mode").is_none() {
                params["mode"] = json!("url");
            }
            if let Err(reason) = check(&params, &self.config.limits) {
                tracing::warn!(%reason, "a -32042 error carried an invalid URL elicitation");
                continue;
            }
            let eid = params
                .get("elicitationId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let mode = mode_of(&params).to_owned();
            let ask = self.next_id();
            self.asks.insert(ask, AskFor::Consent { consent, eid, mode });
            out.ask(ask, params, None);
            return;
        }
        if let Some(held) = self.consents.remove(&consent) {
            out.raw(Peer::Host, held.line);
        }
    }

    pub(super) fn consent_reply(
        &mut self,
        consent: AskId,
        eid: Option<String>,
        mode: &str,
        reply: Reply,
        out: &mut Out,
    ) {
        match self.decide(reply, mode, out) {
            Decision::Result(result) | Decision::Unasked { result, .. } => {
                tracing::info!(action = %result["action"], "URL elicitation of a -32042 error answered");
                if let Some(eid) = eid {
                    self.handled_url_ids.insert(eid);
                }
            }
            other => tracing::info!(?other, "URL elicitation of a -32042 error not shown"),
        }
        self.next_consent(consent, out);
    }
}
