//! Signals go out in the order the core raised them, through one task:
//! `Response` and `Unseen` to a session's owner alone, `FormChanged` to each watcher
//! alone (a broadcast would reach every connection the bus admits, other
//! users' included).

use elicit_proto::dbus::{BROKER_PATH, Dict, form_path};
use tokio::sync::mpsc;
use zbus::names::BusName;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::Str;

use crate::bus::{BrokerIface, RequestIface};
use crate::core::{FormChangedSignal, ResponseSignal, Unseen, action_name};

/// A signal waiting to be sent.
#[derive(Debug)]
pub(super) enum Signal {
    Response(ResponseSignal),
    FormChanged(FormChangedSignal),
    /// `Unseen` to a form's owner alone, with why nobody shows it.
    Unseen(Unseen, String),
}

/// The queue to the signal task.
pub(super) struct Signals(mpsc::UnboundedSender<Signal>);

impl Signals {
    /// The queue and the task that empties it.
    pub(super) fn start(conn: zbus::Connection) -> (Signals, impl Future<Output = ()> + Send + 'static) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Signals(sender), send_all(conn, receiver))
    }

    pub(super) fn send(&self, signal: Signal) {
        // The task ends only with the driver.
        let _stopping = self.0.send(signal);
    }
}

async fn send_all(conn: zbus::Connection, mut signals: mpsc::UnboundedReceiver<Signal>) {
    while let Some(signal) = signals.recv().await {
        match signal {
            Signal::Response(ResponseSignal {
                owner,
                session,
                form,
                answer,
                reason,
                answered_by,
            }) => {
                let content = answer
                    .content
                    .as_ref()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "null".into());
                let mut details = Dict::new();
                details.insert("reason".into(), Str::from(reason).into());
                details.insert("answered-by".into(), Str::from(answered_by).into());
                let path = form_path(&session, &form.to_string());
                let sent = async {
                    let emitter = SignalEmitter::new(&conn, path.as_str())?
                        .set_destination(BusName::try_from(owner.as_str())?);
                    RequestIface::response(&emitter, action_name(&answer.action), &content, details).await
                }
                .await;
                if let Err(error) = sent {
                    // The owner may be gone for now; Redeliver brings it back.
                    tracing::warn!(form, %error, "could not send the response");
                }
            }
            Signal::Unseen(Unseen { owner, session, form }, why) => {
                let path = form_path(&session, &form.to_string());
                let sent = async {
                    let emitter = SignalEmitter::new(&conn, path.as_str())?
                        .set_destination(BusName::try_from(owner.as_str())?);
                    RequestIface::unseen(&emitter, &why).await
                }
                .await;
                if let Err(error) = sent {
                    tracing::debug!(form, %error, "Unseen not sent");
                }
            }
            Signal::FormChanged(FormChangedSignal {
                to,
                form,
                session,
                state,
                reason,
            }) => {
                let id = form.to_string();
                for recipient in to {
                    let sent = async {
                        let emitter = SignalEmitter::new(&conn, BROKER_PATH)?
                            .set_destination(BusName::try_from(recipient.as_str())?);
                        BrokerIface::form_changed(&emitter, &id, &session, state, &reason).await
                    }
                    .await;
                    if let Err(error) = sent {
                        tracing::debug!(form, %recipient, %error, "FormChanged not sent");
                    }
                }
            }
        }
    }
}
