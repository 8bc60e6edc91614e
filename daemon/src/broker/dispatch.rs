//! Front-ends: registration, presenting each session's head form to the
//! best one, withdrawal, and losing them.

use std::sync::Arc;
use std::time::Duration;

use elicit_proto::Error;
use elicit_proto::dbus::{BROKER_PATH, Dict, Frontend1Proxy, dict_str, dict_strings};
use zbus::names::BusName;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, Value};

use super::sessions::secret;
use super::state::{Capabilities, Frontend, Presenter};
use super::state::{Presentations, Show};
use super::{Broker, Caller};
use crate::bus::BrokerIface;

/// A proxy to the front-end `bus_name` serves at `path`; no property cache,
/// since `Frontend1` has none and building one costs round trips.
async fn frontend_proxy(
    conn: &zbus::Connection,
    bus_name: &str,
    path: String,
) -> zbus::Result<Frontend1Proxy<'static>> {
    Frontend1Proxy::builder(conn)
        .destination(bus_name.to_owned())?
        .path(path)?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
}

impl Broker {
    /// Registers the caller as a front-end served at `path`.
    pub fn register_frontend(
        self: &Arc<Self>,
        caller: &Caller,
        path: ObjectPath<'_>,
        options: &Dict,
    ) -> Result<(), Error> {
        let priority = match options.get("priority").map(|v| &**v) {
            None => 0,
            Some(Value::I32(p)) => *p,
            Some(_) => return Err(Error::BadArgument("option `priority` must be an i32".into())),
        };
        let frontend = self.lock().add_frontend(Frontend {
            bus_name: caller.name.clone(),
            path: path.to_string(),
            name: dict_str(options, "name").unwrap_or_else(|| caller.name.clone()),
            capabilities: Capabilities::from_names(dict_strings(options, "capabilities")),
            priority,
            // Set by the state: registration order.
            order: 0,
        });
        tracing::info!(frontend = %frontend.name, bus_name = %frontend.bus_name, "front-end registered");
        self.launcher.registered(&frontend.bus_name);
        self.dispatch_all();
        Ok(())
    }

    /// The caller withdraws its front-end registration.
    pub fn unregister_frontend(self: &Arc<Self>, caller: &Caller) {
        self.frontend_lost(&caller.name);
    }

    /// `bus_name` no longer presents anything: its forms go back to the
    /// head of their queues and on to the next front-end.
    pub(crate) fn frontend_lost(self: &Arc<Self>, bus_name: &str) {
        let (frontend, sessions) = self.lock().frontend_gone(bus_name);
        if let Some(frontend) = frontend {
            tracing::info!(frontend = %frontend.name, %bus_name, "front-end gone");
        }
        if !sessions.is_empty() {
            self.dispatch(sessions);
        }
    }

    /// Presents the head form of every session.
    pub(crate) fn dispatch_all(self: &Arc<Self>) {
        let sessions = self.lock().sessions_by_head();
        self.dispatch(sessions);
    }

    /// Presents the head form of each of `sessions` that has none shown.
    pub(crate) fn dispatch(self: &Arc<Self>, sessions: impl IntoIterator<Item = String>) {
        let Presentations { shows, unserved } =
            self.lock()
                .present_heads(sessions, &self.config.frontends.preference, secret);
        for unwanted in &unserved {
            self.launcher.ensure_running(unwanted);
        }
        for job in shows {
            self.form_changed(job.form, &job.session, "presented", &job.presenter.label);
            self.spawn(self.clone().show(job));
        }
    }

    async fn show(self: Arc<Self>, job: Show) {
        // The front-end's time starts once the call can go out.
        let Ok(_permit) = self.calls_out.acquire().await else {
            return;
        };
        let timeout = Duration::from_millis(self.config.broker.show_timeout_ms);
        let call = async {
            let path = job.presenter.frontend_path.clone().unwrap_or_default();
            frontend_proxy(&self.conn, &job.presenter.bus_name, path)
                .await?
                .show(
                    &job.form.to_string(),
                    &job.presenter.token,
                    &job.request_json,
                    job.info,
                )
                .await
        };
        let outcome = tokio::time::timeout(timeout, call).await;
        let failure = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no reply within {timeout:?}"),
        };
        tracing::warn!(form = job.form, frontend = %job.presenter.label, %failure, "front-end failed to show a form; dropping it");
        self.frontend_lost(&job.presenter.bus_name);
    }

    /// Tells a presenter to stop showing a form; control clients are not
    /// told (they learn from `FormChanged`).
    pub(crate) fn withdraw(&self, presenter: &Presenter, form: u64, reason: &str) {
        let Some(path) = presenter.frontend_path.clone() else {
            return;
        };
        let conn = self.conn.clone();
        let bus_name = presenter.bus_name.clone();
        let reason = reason.to_owned();
        let calls_out = self.calls_out.clone();
        self.spawn(async move {
            let Ok(_permit) = calls_out.acquire_owned().await else {
                return;
            };
            let call = async {
                frontend_proxy(&conn, &bus_name, path)
                    .await?
                    .withdraw(&form.to_string(), &reason)
                    .await
            };
            if let Err(error) = call.await {
                tracing::debug!(form, %bus_name, %error, "withdraw not delivered");
            }
        });
    }

    /// Broadcasts a state change to observers (`elicit watch`): ids and
    /// states only, never contents. Signals go out in order through one
    /// queue.
    pub(crate) fn form_changed(&self, form: u64, session: &str, state: &str, reason: &str) {
        // Four per form: with nobody watching (the usual case), not even a
        // wake-up of the sending task.
        if self.watchers.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
            return;
        }
        let _ = self.events.send(FormEvent {
            form,
            session: session.to_owned(),
            state: state.to_owned(),
            reason: reason.to_owned(),
        });
    }
}

/// A `FormChanged` signal waiting to be sent.
#[derive(Debug)]
pub(crate) struct FormEvent {
    form: u64,
    session: String,
    state: String,
    reason: String,
}

/// Sends `FormChanged` signals in the order they were raised, each to
/// every watcher alone: a broadcast would reach every connection the bus
/// admits, other users' included.
pub(crate) async fn emit_form_events(
    conn: zbus::Connection,
    mut events: tokio::sync::mpsc::UnboundedReceiver<FormEvent>,
    watchers: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
) {
    while let Some(event) = events.recv().await {
        let form = event.form.to_string();
        let recipients: Vec<String> = watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        for recipient in recipients {
            let sent = async {
                let emitter = SignalEmitter::new(&conn, BROKER_PATH)?
                    .set_destination(BusName::try_from(recipient.as_str())?);
                BrokerIface::form_changed(&emitter, &form, &event.session, &event.state, &event.reason).await
            }
            .await;
            if let Err(error) = sent {
                tracing::debug!(form = event.form, %recipient, %error, "FormChanged not sent");
            }
        }
    }
}
