//! The actor that carries out the core's effects: it writes lines, asks
//! the broker, fires withdrawals and runs keep-alives, every task of its
//! own in one [`JoinSet`], so that when the relay ends, they end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elicit_proto::dbus::Origin;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::asked::Asked;
use super::broker::Broker;
use super::cancel::Cancel;
use super::decide::{AskId, Effect, Input, Line, OriginChange};
use super::outbox::Outbox;

/// Runs effects; the inputs they lead to come back on its channel.
pub struct Actor {
    outbox: Outbox,
    broker: Broker,
    origin: Arc<Mutex<Origin>>,
    inputs: mpsc::UnboundedSender<Input>,
    /// How often a keep-alive ticks.
    every: Duration,
    tasks: JoinSet<()>,
    /// The forms the broker has, and how to withdraw each.
    asks: HashMap<AskId, Cancel>,
    keepalives: HashMap<AskId, AbortHandle>,
    /// The count of `asks`, for whoever runs the relay.
    asked: Asked,
}

impl Actor {
    /// An actor writing to `outbox` and asking `broker`; the receiver
    /// yields what its tasks report, for the core.
    pub fn new(
        outbox: Outbox,
        broker: Broker,
        origin: Arc<Mutex<Origin>>,
        every: Duration,
        asked: Asked,
    ) -> (Actor, mpsc::UnboundedReceiver<Input>) {
        let (inputs, receiver) = mpsc::unbounded_channel();
        let actor = Actor {
            outbox,
            broker,
            origin,
            inputs,
            every,
            tasks: JoinSet::new(),
            asks: HashMap::new(),
            keepalives: HashMap::new(),
            asked,
        };
        (actor, receiver)
    }

    /// Carries out `effects` in order.
    pub fn run(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Send(peer, Line::Raw(line)) => self.outbox.raw(peer, line),
                Effect::Send(peer, Line::Json(message)) => self.outbox.send(peer, &message),
                Effect::Ask {
                    ask,
                    params,
                    timeout_secs,
                } => {
                    let cancel = Cancel::new();
                    // Submitted here, not in the task: the broker gets the
                    // forms in the order the core asked them.
                    let (reply, unseen) =
                        self.broker
                            .submit(params.to_string(), timeout_secs, cancel.clone());
                    self.asks.insert(ask, cancel);
                    self.asked.set(self.asks.len());
                    let inputs = self.inputs.clone();
                    self.tasks.spawn(async move {
                        let reply = reply.await;
                        let _ = inputs.send(Input::Reply { ask, reply });
                    });
                    // Ends unsent once the form has its outcome.
                    let inputs = self.inputs.clone();
                    self.tasks.spawn(async move {
                        if let Ok(notice) = unseen.await {
                            let _ = inputs.send(Input::Unseen {
                                ask,
                                form: notice.form,
                                why: notice.why,
                            });
                        }
                    });
                }
                Effect::Withdraw(ask) => {
                    if let Some(cancel) = self.asks.get(&ask) {
                        cancel.cancel();
                    }
                }
                Effect::StartKeepalive(keepalive) => {
                    let ticks = ticks(self.inputs.clone(), keepalive, self.every);
                    let handle = self.tasks.spawn(ticks);
                    self.keepalives.insert(keepalive, handle);
                }
                Effect::StopKeepalive(keepalive) => {
                    if let Some(handle) = self.keepalives.remove(&keepalive) {
                        handle.abort();
                    }
                }
                Effect::Origin(change) => self.change_origin(change),
                Effect::Say(text) => crate::say!("{text}"),
            }
        }
    }

    /// Notes an input from its channel before the core gets it: a form
    /// with its reply is no longer the broker's.
    pub fn received(&mut self, input: &Input) {
        if let Input::Reply { ask, .. } = input {
            self.asks.remove(ask);
            self.asked.set(self.asks.len());
        }
    }

    /// Whether forms still wait for the broker's reply.
    pub fn asking(&self) -> bool {
        !self.asks.is_empty()
    }

    /// Resolves when one of its tasks has finished (never while it has
    /// none), so that the relay forgets finished ones.
    pub async fn reaped(&mut self) {
        if self.tasks.join_next().await.is_none() {
            std::future::pending::<()>().await;
        }
    }

    fn change_origin(&self, change: OriginChange) {
        let mut origin = self
            .origin
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match change {
            OriginChange::Host { name, version } => {
                origin.host = name;
                origin.host_version = version;
            }
            OriginChange::Server { name, version } => {
                origin.server = Some(name);
                origin.server_version = version;
            }
        }
    }
}

/// Reports each keep-alive period, counting from 1 so that progress always
/// increases. Hosts time requests out (often after 60 s) while the user is
/// still typing; hosts that reset their timeout on progress then wait for
/// the human.
async fn ticks(inputs: mpsc::UnboundedSender<Input>, keepalive: AskId, every: Duration) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut progress = 0u64;
    loop {
        ticks.tick().await;
        progress += 1;
        if inputs.send(Input::Tick { keepalive, progress }).is_err() {
            break;
        }
    }
}
