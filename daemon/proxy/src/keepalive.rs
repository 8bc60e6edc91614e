//! Progress notifications while a human is answering.
//!
//! Hosts time requests out (often after 60 s) while the user is still
//! typing. Where the host gave a progress token, a periodic
//! `notifications/progress` tells it the request is alive; hosts that
//! reset their timeout on progress then wait for the human.

use std::time::Duration;

use serde_json::{Value, json};

use super::message;
use super::outbox::{Outbox, Peer};

/// Sends progress for the tokens `tokens` yields, every `every`, until
/// dropped. Progress counts up from 1 so that it always increases.
pub async fn run(outbox: Outbox, every: Duration, tokens: impl Fn() -> Vec<Value>) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut progress = 0u64;
    loop {
        ticks.tick().await;
        progress += 1;
        for token in tokens() {
            let note = message::notification(
                "notifications/progress",
                json!({
                    "progressToken": token,
                    "progress": progress,
                    "message": "waiting for the user to answer a form (elicitd)",
                }),
            );
            outbox.send(Peer::Host, &note);
        }
    }
}
