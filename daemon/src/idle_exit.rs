//! Leaving when idle: the shell around [`Broker::idle_for`].
//!
//! After `[broker] exit-on-idle-secs` with nothing to keep it (see
//! `broker/idle.rs`), the daemon gives up its bus name and stops as on
//! SIGTERM; the next call to the name starts a fresh one by D-Bus
//! activation. A call racing the exit must not be lost, so the name goes
//! first, and the daemon leaves only if nothing arrived meanwhile;
//! otherwise it takes the name back and serves on.

use std::sync::Arc;
use std::time::Duration;

use elicit_proto::dbus::{BROKER_PATH, BUS_NAME};
use zbus::fdo::{RequestNameFlags, RequestNameReply};

use crate::broker::Broker;

/// How long the handlers of calls that reached the daemon just before it
/// let go of its name get to start (and count as busy) before it looks
/// again: they were dispatched already, and start within microseconds.
const SETTLE: Duration = Duration::from_millis(50);

/// Returns once the daemon has been idle for `period` and no longer owns
/// its name, with nothing arrived in between; the caller then stops as
/// for any orderly stop.
pub async fn until_idle(broker: Arc<Broker>, period: Duration) {
    loop {
        idle_for(&broker, period).await;
        match release(&broker).await {
            Ok(true) => return,
            Ok(false) => tracing::info!("a call arrived while leaving idle; serving on"),
            Err(error) => {
                // The name may be gone or not: serving on is safe either
                // way, and the next idle period tries again.
                tracing::warn!(%error, "could not leave idle; serving on");
            }
        }
    }
}

/// Waits until nothing has kept the daemon running for `period`.
async fn idle_for(broker: &Broker, period: Duration) {
    loop {
        // Subscribed before looking, so that no change is missed.
        let changed = broker.idle_changed();
        match broker.idle_for() {
            Some(idle) if idle >= period => return,
            Some(idle) => {
                tokio::select! {
                    () = tokio::time::sleep(period - idle) => {}
                    () = changed => {}
                }
            }
            None => changed.await,
        }
    }
}

/// Gives up the name; true when the daemon may leave, false when a call
/// got in first and the name is the daemon's again.
async fn release(broker: &Broker) -> zbus::Result<bool> {
    let conn = broker.connection();
    if !conn.release_name(BUS_NAME).await? {
        // Not ours (any more): nothing to serve on.
        return Ok(true);
    }
    // The bus routes calls in order: every call made to the name before
    // it let go reached this connection before the reply to a round trip
    // to itself, and the object server had dispatched it by then.
    if let Some(own) = conn.unique_name() {
        conn.call_method(
            Some(own.to_owned()),
            BROKER_PATH,
            Some("org.freedesktop.DBus.Peer"),
            "Ping",
            &(),
        )
        .await?;
    }
    tokio::time::sleep(SETTLE).await;
    if broker.idle_for().is_some() {
        return Ok(true);
    }
    let again = conn
        .request_name_with_flags(BUS_NAME, RequestNameFlags::DoNotQueue.into())
        .await;
    match again {
        Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => Ok(false),
        // Taken meanwhile (a daemon activated by a later call waits for
        // this one's state lock, so that is not it): what the late call
        // left is durable, and its client re-attaches to whoever proves
        // it knows the session, as after a restart.
        Ok(_) => Ok(true),
        Err(error) => Err(error),
    }
}
