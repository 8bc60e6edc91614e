//! Asking the user one elicitation: the schema check, the broker, the
//! keep-alive, and the fallback when elicitd cannot be reached.

use elicit_proto::{Elicitation, Limits};
use serde_json::{Value, json};

use super::NoBroker;
use super::broker::Reply;
use super::cancel::Cancel;
use super::keepalive;
use super::message;
use super::outbox::Peer;
use super::state::Ctx;

/// What to do with an elicitation.
#[derive(Debug)]
pub enum Decision {
    /// Send this `ElicitResult` back.
    Result(Value),
    /// Send this `ElicitResult` back, though nobody was asked: elicitd was
    /// unreachable. The warning says so, for the host's user.
    Unasked {
        /// The configured no-broker outcome.
        result: Value,
        /// What happened, in a sentence.
        warning: String,
    },
    /// Let the host answer it (it declared the mode).
    Host,
    /// The request fails the MCP subset check; the text says why.
    Invalid(String),
    /// The broker refused it.
    Refused(elicit_proto::Error),
    /// Withdrawn before an answer came: nothing is sent.
    Withdrawn,
}

/// Checks `params` against the MCP subset; the reason when it fails.
pub fn check(params: &Value, limits: &Limits) -> Result<(), String> {
    Elicitation::from_value(params.clone(), limits)
        .map(|_| ())
        .map_err(|errors| errors.to_string())
}

/// The mode of `elicitation/create` params (`form` when absent).
pub fn mode_of(params: &Value) -> &str {
    params.get("mode").and_then(Value::as_str).unwrap_or("form")
}

/// Asks the user through the broker, sending progress for `tokens` while
/// the form is open.
pub async fn ask(ctx: &Ctx, params: &Value, cancel: &Cancel, tokens: impl Fn() -> Vec<Value>) -> Decision {
    ask_within(ctx, params, None, cancel, tokens).await
}

/// [`ask`] with a deadline of `timeout_secs`, after which the broker
/// cancels the form.
pub async fn ask_within(
    ctx: &Ctx,
    params: &Value,
    timeout_secs: Option<u64>,
    cancel: &Cancel,
    tokens: impl Fn() -> Vec<Value>,
) -> Decision {
    if let Err(reason) = check(params, &ctx.options.limits) {
        return Decision::Invalid(reason);
    }
    let reply = tokio::select! {
        reply = ctx.broker.ask_within(params.to_string(), timeout_secs, cancel.clone()) => reply,
        () = keepalive::run(ctx.outbox.clone(), ctx.options.keepalive, tokens) => Reply::Withdrawn,
    };
    match reply {
        Reply::Answered(outcome) => {
            let mut result = json!({"action": outcome.action});
            if outcome.action == "accept"
                && let Some(content) = outcome.content
            {
                result["content"] = content;
            }
            Decision::Result(result)
        }
        Reply::Refused(error) => Decision::Refused(error),
        Reply::Withdrawn => Decision::Withdrawn,
        Reply::Unavailable(why) => fallback(ctx, mode_of(params), &why),
    }
}

fn fallback(ctx: &Ctx, mode: &str, why: &str) -> Decision {
    let host_can = ctx.state().host_caps.can_elicit(mode);
    // Nobody was asked, so the honest default is cancel ("dismissed
    // without a choice"), not decline ("the user said no").
    let (action, said) = match ctx.options.no_broker {
        NoBroker::Host | NoBroker::Auto if host_can => {
            // A host may declare elicitation and still answer nobody:
            // Claude Code in print mode (`claude -p`) cancels every form
            // itself. So the host is told too, not only standard error,
            // which such a host pipes and never shows.
            warn(
                ctx,
                &format!(
                    "elicit proxy: warning: elicitd cannot be reached ({why}); the server's form goes to the host, and a host that cannot show forms (`claude -p`) cancels it"
                ),
            );
            return Decision::Host;
        }
        NoBroker::Decline => ("decline", "answered decline"),
        _ => ("cancel", "answered cancel"),
    };
    let warning = format!(
        "elicit proxy: nobody was asked: elicitd cannot be reached ({why}), so the server's form was {said} (see `elicit proxy --no-broker`)"
    );
    warn(ctx, &warning);
    Decision::Unasked {
        result: json!({ "action": action }),
        warning,
    }
}

/// Says `warning` on standard error, which reaches the host's log of this
/// server where there is one, and as a `notifications/message` to the
/// host, which hosts that show server logs display.
fn warn(ctx: &Ctx, warning: &str) {
    crate::say!("{warning}");
    if ctx.state().host_logs(LOG_LEVEL) {
        let note = message::notification(
            "notifications/message",
            json!({"level": LOG_LEVEL, "logger": "elicit-proxy", "data": warning}),
        );
        ctx.outbox.send(Peer::Host, &note);
    }
}

/// The level of the proxy's own log messages to the host.
const LOG_LEVEL: &str = "warning";
