//! Carrying out the core's effects.

use std::time::Duration;

use elicit_proto::dbus::{BUS_NAME, Dict, Frontend1Proxy, OriginDict, form_path, session_path};
use zbus::fdo::{RequestNameFlags, RequestNameReply};
use zbus::zvariant::Str;

use super::signals::Signal;
use super::{Driver, RETURNING_FRONTENDS, Stopped};
use crate::bus::{RequestIface, SessionIface};
use crate::core::state::{Show, ShowInfo};
use crate::core::{Effect, Input, Object};
use crate::store::Batch;

/// How long the handlers of calls that reached the daemon just before it
/// let go of its name get to start (and count as busy) before it looks
/// again: they were dispatched already, and start within microseconds.
const SETTLE: Duration = Duration::from_millis(50);

/// The `info` dictionary that goes with a form to a front-end or claimer.
pub fn info_dict(info: &ShowInfo) -> Dict {
    let mut dict = info.origin.to_dict();
    dict.insert("session".into(), Str::from(info.session.clone()).into());
    dict.insert("queued-at-ms".into(), info.queued_ms.into());
    dict.insert("deadline-ms".into(), info.deadline_ms.into());
    dict
}

/// How long a `Withdraw` to a front-end set aside waits for its reply: a
/// front-end that keeps missing its `Show`s holds a bounded number.
const RECALL_WAIT: Duration = Duration::from_secs(600);

/// `info` with `reply-by-ms`: the wall-clock time after which the broker
/// no longer waits for this `Show` and has moved the form, so that a
/// front-end that reads it later (it was stopped) does not show it stale.
fn reply_by(mut info: Dict, timeout: Duration) -> Dict {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let by = (now + timeout).as_millis() as u64;
    info.insert("reply-by-ms".into(), by.into());
    info
}

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

impl Driver {
    pub(super) async fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::Write {
                batch,
                writes,
                next_id,
                lazy,
            } => self.write(batch, writes, next_id, lazy),
            Effect::Reply { call, result } => {
                if let Some(reply) = self.replies.remove(&call) {
                    // The caller may have given up; nothing to do then.
                    let _gone = reply.send(result);
                }
            }
            Effect::Show(show) => self.show(show),
            Effect::Withdraw {
                bus_name,
                path,
                session,
                form,
                reason,
            } => self.withdraw(bus_name, path, &session, form, reason),
            Effect::Recall {
                bus_name,
                path,
                session,
                form,
            } => self.recall(bus_name, path, &session, form),
            Effect::Response(signal) => self.signals.send(Signal::Response(signal)),
            Effect::FormChanged(signal) => self.signals.send(Signal::FormChanged(signal)),
            Effect::Launch(unwanted) => self.launch(unwanted).await,
            Effect::Registered(bus_name) => self.launcher.registered(&bus_name),
            Effect::AwaitReturning(returning) => {
                self.returning_until = self.launcher.await_returning(returning, RETURNING_FRONTENDS);
            }
            Effect::Export(object) => self.export(object).await,
            Effect::Unexport(object) => self.unexport(object).await,
            Effect::ReleaseName => self.release_name(),
            Effect::RequestName => self.request_name().await,
            Effect::Exit => self.stopped = Some(Stopped::Idle),
        }
    }

    /// Sends a batch to the storage thread now (so that batches reach it
    /// in the order the core made them), and reports its outcome back.
    fn write(&mut self, batch: u64, writes: Vec<crate::core::Write>, next_id: u64, lazy: bool) {
        self.store.advance_ids(next_id);
        let made = Batch::of_writes(writes, self.config.history.max_records);
        if lazy {
            match made {
                Ok(made) => self.store.write_soon(made),
                Err(error) => tracing::error!(%error, "a delayed write could not be encoded"),
            }
            return;
        }
        let handle = self.handle.clone();
        let done = made.map(|made| self.store.queue_commit(made));
        self.tasks.spawn(async move {
            let result = match done {
                Ok(done) => done.await.map_err(|e| e.to_string()),
                Err(error) => Err(error.to_string()),
            };
            handle.input(match result {
                Ok(()) => Input::Stored(batch),
                Err(error) => Input::Failed { batch, error },
            });
        });
    }

    fn show(&mut self, show: Show) {
        let conn = self.conn.clone();
        let calls_out = self.calls_out.clone();
        let handle = self.handle.clone();
        let timeout = Duration::from_millis(self.config.broker.show_timeout_ms);
        let mut turn = self.call_order.next(&show.presenter.bus_name, &show.session);
        self.tasks.spawn(async move {
            // The front-end's time starts once the call can go out.
            turn.wait().await;
            let Ok(_permit) = calls_out.acquire().await else {
                return;
            };
            let call = async {
                let path = show.presenter.frontend_path.clone().unwrap_or_default();
                frontend_proxy(&conn, &show.presenter.bus_name, path)
                    .await?
                    .show(
                        &show.form.to_string(),
                        &show.presenter.token,
                        &show.request_json,
                        reply_by(info_dict(&show.info), timeout),
                    )
                    .await
            };
            match tokio::time::timeout(timeout, call).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(form = show.form, frontend = %show.presenter.label, %error, "a Show call failed");
                    handle.input(Input::ShowFailed {
                        form: show.form,
                        bus_name: show.presenter.bus_name,
                    });
                }
                Err(_) => handle.input(Input::ShowUnanswered {
                    form: show.form,
                    bus_name: show.presenter.bus_name,
                }),
            }
        });
    }

    /// `Withdraw` to a front-end set aside: it may be stopped for minutes,
    /// so the call waits up to [`RECALL_WAIT`] (the bus ends it sooner if
    /// the front-end leaves), and its reply brings the front-end back.
    /// Later, its next call does.
    fn recall(&mut self, bus_name: String, path: String, session: &str, form: u64) {
        let conn = self.conn.clone();
        let handle = self.handle.clone();
        let mut turn = self.call_order.next(&bus_name, session);
        self.tasks.spawn(async move {
            // After the unanswered Show: the front-end reads this after it.
            turn.wait().await;
            let call = async {
                frontend_proxy(&conn, &bus_name, path)
                    .await?
                    .withdraw(&form.to_string(), "unanswered")
                    .await
            };
            match tokio::time::timeout(RECALL_WAIT, call).await {
                Ok(Ok(())) => handle.input(Input::FrontendAnswered(bus_name)),
                Ok(Err(error)) => tracing::debug!(form, %bus_name, %error, "a recall was not delivered"),
                Err(_) => {
                    tracing::debug!(form, %bus_name, "a recall was not answered within {RECALL_WAIT:?}")
                }
            }
        });
    }

    fn withdraw(&mut self, bus_name: String, path: String, session: &str, form: u64, reason: String) {
        let conn = self.conn.clone();
        let calls_out = self.calls_out.clone();
        let mut turn = self.call_order.next(&bus_name, session);
        // Bounded like a Show: the front-end's next call waits for this one.
        let timeout = Duration::from_millis(self.config.broker.show_timeout_ms);
        self.tasks.spawn(async move {
            turn.wait().await;
            let Ok(_permit) = calls_out.acquire().await else {
                return;
            };
            let call = async {
                frontend_proxy(&conn, &bus_name, path)
                    .await?
                    .withdraw(&form.to_string(), &reason)
                    .await
            };
            match tokio::time::timeout(timeout, call).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::debug!(form, %bus_name, %error, "withdraw not delivered"),
                Err(_) => tracing::debug!(form, %bus_name, "withdraw not answered within {timeout:?}"),
            }
        });
    }

    async fn export(&self, object: Object) {
        let server = self.conn.object_server();
        let exported = match object {
            Object::Session(id) => {
                let path = session_path(&id);
                server
                    .at(path.as_str(), SessionIface::new(self.handle.clone(), id))
                    .await
            }
            Object::Form(session, id) => {
                let path = form_path(&session, &id.to_string());
                server
                    .at(path.as_str(), RequestIface::new(self.handle.clone(), id))
                    .await
            }
        };
        if let Err(error) = exported {
            tracing::error!(%error, "could not export an object");
        }
    }

    async fn unexport(&self, object: Object) {
        let server = self.conn.object_server();
        let _gone = match object {
            Object::Session(id) => server.remove::<SessionIface, _>(session_path(&id).as_str()).await,
            Object::Form(session, id) => {
                server
                    .remove::<RequestIface, _>(form_path(&session, &id.to_string()).as_str())
                    .await
            }
        };
    }

    /// Gives up the name for an idle exit, on a task: calls keep coming
    /// in meanwhile. Every call made to the name before it let go reaches
    /// this connection before the reply to a round trip to itself (the bus
    /// routes in order), and is dispatched by then.
    fn release_name(&mut self) {
        let conn = self.conn.clone();
        let handle = self.handle.clone();
        self.tasks.spawn(async move {
            let released = async {
                if !conn.release_name(BUS_NAME).await? {
                    // Not ours (any more): nothing to serve on.
                    return Ok::<bool, zbus::Error>(false);
                }
                if let Some(own) = conn.unique_name() {
                    conn.call_method(
                        Some(own.to_owned()),
                        elicit_proto::dbus::BROKER_PATH,
                        Some("org.freedesktop.DBus.Peer"),
                        "Ping",
                        &(),
                    )
                    .await?;
                }
                tokio::time::sleep(SETTLE).await;
                Ok(true)
            };
            let busy = match released.await {
                Ok(_) => handle.busy_count().load(std::sync::atomic::Ordering::SeqCst) > 0,
                Err(error) => {
                    // The name may be gone or not: serving on is safe.
                    tracing::warn!(%error, "could not leave idle; serving on");
                    true
                }
            };
            handle.input(Input::NameReleased { busy });
        });
    }

    /// Takes the name back after a call came in while leaving idle.
    async fn request_name(&mut self) {
        let again = self
            .conn
            .request_name_with_flags(BUS_NAME, RequestNameFlags::DoNotQueue.into())
            .await;
        match again {
            Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => {}
            // Taken meanwhile (a daemon activated by a later call waits for
            // this one's state lock, so that is not it): what the late call
            // left is durable, and its client re-attaches to whoever proves
            // it knows the session, as after a restart.
            Ok(_) => self.stopped = Some(Stopped::Idle),
            Err(error) => tracing::warn!(%error, "could not take the name back; serving on"),
        }
    }
}
