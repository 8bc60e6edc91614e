//! Following the daemon across restarts: re-attaching to a new owner of
//! the broker's name once it proves itself, and calling the name so that
//! D-Bus activation starts a daemon that died while this session needs it.

use std::time::Duration;

use elicit_proto::Error;
use elicit_proto::dbus::{BROKER_PATH, BUS_NAME};
use elicit_proto::trust::{self, Role};
use futures_util::StreamExt;
use zbus::Connection;

use super::{ClientSession, request_proxy};

/// How long a session whose broker left waits for another before it
/// calls the name, so that a restart someone else drives is not doubled.
pub(super) const POKE_AFTER: Duration = Duration::from_secs(1);

/// How long that call may take: starting the daemon, which may first wait
/// for the one before to release the state directory.
pub(super) const POKE_PATIENCE: Duration = Duration::from_secs(10);

impl ClientSession {
    /// Re-attaches to the new owner of the broker's name once it has
    /// proved it knows this session, proving the same in return; the
    /// resume token never crosses the bus. An owner that cannot prove it
    /// is not believed: a warning says so and this returns `Ok`, so that
    /// `wait` goes on waiting for the real broker.
    pub(super) async fn reattach(&mut self) -> Result<(), Error> {
        let nonce = trust::nonce();
        let proved = trust::call_broker::<_, (Vec<u8>, Vec<u8>)>(
            &self.conn,
            "ProveSession",
            &(self.id.as_str(), nonce.as_slice()),
        )
        .await;
        let ((proof, challenge), prover) = match proved.map_err(Error::from) {
            Ok(proved) => proved,
            // The broker does not know this session (its state is gone):
            // waiting cannot help.
            Err(error @ Error::NotFound(_)) => return Err(error),
            Err(error) => {
                eprintln!(
                    "elicit: warning: the new owner of {BUS_NAME} did not prove it is elicitd ({}); \
                     waiting for the real one",
                    error.detail()
                );
                return Ok(());
            }
        };
        if !trust::verify(
            &self.resume_token,
            Role::BrokerToClient,
            &self.id,
            &prover,
            &nonce,
            &proof,
        ) {
            let who = trust::describe_connection(&self.conn, &prover).await;
            eprintln!("elicit: warning: {}", trust::ProofError::Impostor { who });
            return Ok(());
        }
        let own = self.conn.unique_name().map(|n| n.to_string()).unwrap_or_default();
        let answer = trust::proof(
            &self.resume_token,
            Role::ClientToBroker,
            &self.id,
            &own,
            &challenge,
        );
        // To the proven connection itself, not to whoever owns the name by
        // now.
        let resumed = self
            .conn
            .call_method(
                Some(prover.as_str()),
                BROKER_PATH,
                Some("dev.elicitd.Broker1"),
                "ResumeProven",
                &(self.id.as_str(), answer.as_slice()),
            )
            .await;
        if let Err(error) = resumed {
            let error = Error::from(error);
            // The prover left, or began to stop, between its proof and
            // this: not attached, and waiting goes on for the next owner.
            if daemon_went_away(&error) {
                tracing::info!(%error, "the broker went away while re-attaching; waiting for the next");
                return Ok(());
            }
            return Err(error);
        }
        self.daemon = Some(prover);
        // An acknowledgement sent without a reply may have died with the
        // old daemon: the restarted one would keep that answer and send it
        // again to a caller who has it. Acknowledge again first (a form
        // already gone is fine).
        for form in &self.unconfirmed {
            if let Ok(proxy) = request_proxy(&self.conn, form).await {
                let _ = proxy.acknowledge().await;
            }
        }
        self.session_proxy().await?.redeliver().await.map_err(Error::from)
    }

    /// Calls the broker's name, so that D-Bus activation starts a daemon
    /// if none runs; waits for the reply until `until` at most (starting
    /// may first wait for the daemon before to release the state
    /// directory). Without activation, or on the asker socket, which has
    /// no names, the call fails or is not made, and waiting goes on.
    pub(super) async fn poke(&self, until: tokio::time::Instant) {
        if !self.conn.is_bus() {
            return;
        }
        let until = until.min(tokio::time::Instant::now() + POKE_PATIENCE);
        let ping = self.conn.call_method(
            Some(BUS_NAME),
            "/",
            Some("org.freedesktop.DBus.Peer"),
            "Ping",
            &(),
        );
        if let Ok(Err(error)) = tokio::time::timeout_at(until, ping).await {
            tracing::debug!(%error, "the broker could not be started");
        }
    }

    /// Waits until the broker's name changes owner, or [`POKE_AFTER`] passes
    /// (a retried call may start the daemon by D-Bus activation, which
    /// nobody would announce before), or `deadline`; true when the name
    /// has an owner then (not yet believed: see [`Self::reattach`]).
    pub(super) async fn until_daemon_changes(&mut self, deadline: tokio::time::Instant) -> bool {
        let give_up = deadline.min(tokio::time::Instant::now() + POKE_AFTER);
        let owned = tokio::time::timeout_at(give_up, async {
            while let Some(change) = self.daemon_changes.next().await {
                if change.args().is_ok_and(|args| args.new_owner().is_some()) {
                    return true;
                }
            }
            false
        })
        .await;
        owned == Ok(true) || daemon_name(&self.conn).await.is_some()
    }
}

/// Whether a failed call means the broker left the bus (it died before
/// replying, is stopping, or is not back yet) rather than refused.
pub(super) fn daemon_went_away(error: &Error) -> bool {
    match error {
        Error::Stopping(_) => true,
        Error::Bus(zbus::Error::MethodError(name, ..)) => matches!(
            name.as_str(),
            "org.freedesktop.DBus.Error.NoReply"
                | "org.freedesktop.DBus.Error.ServiceUnknown"
                | "org.freedesktop.DBus.Error.NameHasNoOwner"
        ),
        _ => false,
    }
}

/// The unique name that owns the broker's name now, if any.
async fn daemon_name(conn: &Connection) -> Option<String> {
    if !conn.is_bus() {
        return None;
    }
    let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
    let name = zbus::names::BusName::try_from(BUS_NAME).ok()?;
    dbus.get_name_owner(name).await.ok().map(|n| n.to_string())
}
