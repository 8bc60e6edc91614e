//! A broker reply as a decision, and what an elicitation gets when elicitd
//! cannot be reached.

use elicit_proto::{Elicitation, Limits};
use serde_json::{Value, json};

use super::{Core, Out, Peer, Reply};
use crate::NoBroker;
use crate::message;

/// What to do with an elicitation once the broker replied.
#[derive(Debug)]
pub(super) enum Decision {
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
    /// The broker refused it: the JSON-RPC code and why.
    Refused(i64, String),
    /// Withdrawn before an answer came: nothing is sent.
    Withdrawn,
}

/// The level of the proxy's own log messages to the host.
const LOG_LEVEL: &str = "warning";

/// Checks `params` against the MCP subset; the reason when it fails.
pub(super) fn check(params: &Value, limits: &Limits) -> Result<(), String> {
    Elicitation::from_value(params.clone(), limits)
        .map(|_| ())
        .map_err(|errors| errors.to_string())
}

/// The mode of `elicitation/create` params (`form` when absent).
pub(super) fn mode_of(params: &Value) -> &str {
    params.get("mode").and_then(Value::as_str).unwrap_or("form")
}

impl Core {
    /// What `reply` to a form in `mode` means.
    pub(super) fn decide(&self, reply: Reply, mode: &str, out: &mut Out) -> Decision {
        match reply {
            Reply::Answered { action, content } => {
                let mut result = json!({"action": action});
                if action == "accept"
                    && let Some(content) = content
                {
                    result["content"] = content;
                }
                Decision::Result(result)
            }
            Reply::Refused { code, detail } => Decision::Refused(code, detail),
            Reply::Withdrawn => Decision::Withdrawn,
            Reply::Unavailable(why) => self.fallback(mode, &why, out),
        }
    }

    fn fallback(&self, mode: &str, why: &str, out: &mut Out) -> Decision {
        let host_can = self.host_caps.can_elicit(mode);
        // Nobody was asked, so the honest default is cancel ("dismissed
        // without a choice"), not decline ("the user said no").
        let (action, said) = match self.config.no_broker {
            NoBroker::Host | NoBroker::Auto if host_can => {
                // A host may declare elicitation and still answer nobody:
                // in print mode Claude Code (`claude -p`) cancels every form
                // itself and Copilot CLI (`copilot -p`) declines it. So the
                // host is told too, not only standard error, which such a
                // host pipes and never shows.
                self.warn(
                    format!(
                        "elicit proxy: warning: elicitd cannot be reached ({why}); the server's form goes to the host, and a headless host answers it without asking anyone (`claude -p` cancels it, `copilot -p` declines it)"
                    ),
                    out,
                );
                return Decision::Host;
            }
            NoBroker::Decline => ("decline", "answered decline"),
            _ => ("cancel", "answered cancel"),
        };
        let warning = format!(
            "elicit proxy: nobody was asked: elicitd cannot be reached ({why}), so the server's form was {said} (see `elicit proxy --no-broker`)"
        );
        self.warn(warning.clone(), out);
        Decision::Unasked {
            result: json!({ "action": action }),
            warning,
        }
    }

    /// Says `warning` on standard error, which reaches the host's log of
    /// this server where there is one, and as a `notifications/message` to
    /// the host, which hosts that show server logs display.
    pub(super) fn warn(&self, warning: String, out: &mut Out) {
        let note = self.host_logs(LOG_LEVEL).then(|| {
            message::notification(
                "notifications/message",
                json!({"level": LOG_LEVEL, "logger": "elicit-proxy", "data": warning}),
            )
        });
        out.say(warning);
        if let Some(note) = note {
            out.send(Peer::Host, note);
        }
    }
}
