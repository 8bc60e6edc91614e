//! Sessions: opening, resuming, closing, and losing their owner.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::{Origin, session_path};
use rand::Rng;

use super::{Broker, Caller};
use crate::bus::SessionIface;
use crate::store::{Batch, SessionRecord, now_ms};

/// A fresh 128-bit secret, as hex.
pub(crate) fn secret() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Broker {
    /// Opens a session owned by `caller`.
    pub async fn open_session(
        self: &Arc<Self>,
        caller: &Caller,
        mut origin: Origin,
    ) -> Result<(String, String), Error> {
        // What the bus verified replaces whatever the client claimed there.
        origin.caller_pid = caller.pid;
        origin.caller_uid = Some(caller.uid);
        self.check_session_limit(&self.lock(), caller)?;
        let record = SessionRecord {
            id: self.store.next_id().to_string(),
            owner: caller.name.clone(),
            resume_token: secret(),
            origin,
            opened_ms: now_ms(),
        };
        let mut batch = Batch::new();
        batch.put_session(&record);
        self.store.commit(batch).await?;
        let path = session_path(&record.id);
        self.conn
            .object_server()
            .at(path.as_str(), SessionIface::new(self.clone(), record.id.clone()))
            .await?;
        tracing::info!(session = %record.id, owner = %caller.name, origin = %record.origin.describe(), "session opened");
        let token = record.resume_token.clone();
        self.lock().open_session(record);
        Ok((path, token))
    }

    /// Refuses `caller` one more session beyond
    /// `broker.sessions-per-connection`.
    fn check_session_limit(&self, state: &super::state::State, caller: &Caller) -> Result<(), Error> {
        let limit = self.config.broker.sessions_per_connection;
        if state.sessions_of(&caller.name).count() >= limit {
            return Err(Error::LimitExceeded(format!(
                "this connection already has {limit} sessions open (broker.sessions-per-connection)"
            )));
        }
        Ok(())
    }

    /// Re-attaches `caller` as the owner of the session of `token`.
    pub async fn resume_session(&self, caller: &Caller, token: &str) -> Result<String, Error> {
        let id = self
            .lock()
            .sessions()
            .find(|s| s.record.resume_token == token)
            .map(|s| s.record.id.clone())
            .ok_or_else(|| Error::NotFound("no session has this resume token".into()))?;
        self.take_over(caller, &id).await
    }

    /// Makes `caller` the owner of session `id`, within the
    /// sessions-per-connection limit (a session it owns already does not
    /// count twice).
    pub(crate) async fn take_over(&self, caller: &Caller, id: &str) -> Result<String, Error> {
        let record = {
            let state = self.lock();
            let owned = state
                .session(id)
                .ok_or_else(|| Error::NotFound(format!("no session {id}")))?
                .record
                .owner
                == caller.name;
            if !owned {
                self.check_session_limit(&state, caller)?;
            }
            let mut record = state
                .session(id)
                .ok_or_else(|| Error::NotFound(format!("no session {id}")))?
                .record
                .clone();
            record.owner = caller.name.clone();
            record
        };
        // The new owner shows only once it is stored.
        let mut batch = Batch::new();
        batch.put_session(&record);
        self.store.commit(batch).await?;
        self.lock().set_owner(id, &caller.name);
        tracing::info!(session = %record.id, owner = %caller.name, "session resumed");
        Ok(session_path(&record.id))
    }

    /// Checks that `caller` owns `session`.
    pub(crate) fn check_owner(&self, caller: &Caller, session: &str) -> Result<(), Error> {
        match self.lock().session(session) {
            Some(s) if s.record.owner == caller.name => Ok(()),
            Some(_) => Err(Error::AccessDenied(format!(
                "session {session} belongs to another client"
            ))),
            None => Err(Error::NotFound(format!("no session {session}"))),
        }
    }

    /// The owner closed its session: cancel its forms and forget it.
    pub async fn close_session(self: &Arc<Self>, caller: &Caller, session: &str) -> Result<(), Error> {
        self.check_owner(caller, session)?;
        self.end_session(session, "closed").await
    }

    /// Ends `session`: every form of it is cancelled with `reason`.
    pub(crate) async fn end_session(self: &Arc<Self>, session: &str, reason: &str) -> Result<(), Error> {
        // Withdrawing the head must not present the next form first.
        let forms = self.lock().begin_ending(session);
        let ended = async {
            self.drop_forms(&forms, reason).await?;
            let mut batch = Batch::new();
            batch.remove_session(session);
            Ok::<_, Error>(self.store.commit(batch).await?)
        };
        if let Err(error) = ended.await {
            // It goes on as it was: its remaining forms may be shown again.
            self.lock().cancel_ending(session);
            self.dispatch([session.to_owned()]);
            return Err(error);
        }
        self.lock().close_session(session);
        self.activity();
        let _ = self
            .conn
            .object_server()
            .remove::<SessionIface, _>(session_path(session).as_str())
            .await;
        tracing::info!(%session, %reason, "session ended");
        Ok(())
    }

    /// `bus_name` left the bus: after the grace period, every session it
    /// still owns ends with reason `client-gone`.
    pub(crate) fn owner_lost(self: &Arc<Self>, bus_name: &str) {
        let sessions: Vec<String> = self
            .lock()
            .sessions_of(bus_name)
            .map(|s| s.record.id.clone())
            .collect();
        if sessions.is_empty() {
            return;
        }
        let bus_name = bus_name.to_owned();
        let grace = self.config.broker.client_grace();
        // The task holds the broker weakly: the broker owns it.
        let broker = Arc::downgrade(self);
        self.spawn(async move {
            tokio::time::sleep(grace).await;
            let Some(broker) = broker.upgrade() else { return };
            for session in sessions {
                let still_owned = broker
                    .lock()
                    .session(&session)
                    .is_some_and(|s| s.record.owner == bus_name);
                if still_owned && let Err(error) = broker.end_session(&session, "client-gone").await {
                    tracing::error!(%session, %error, "could not end the session of a departed client");
                }
            }
        });
    }
}
