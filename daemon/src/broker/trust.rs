//! The broker proving itself to clients and front-ends after a restart,
//! clients proving themselves to it, and who may watch.
//!
//! A session's resume token crosses the bus once, in the reply to
//! `OpenSession`; a front-end's registration secret once, in the reply to
//! `OpenFrontend`. After that each side shows it knows the secret with an
//! HMAC over the other side's fresh nonce ([`elicit_proto::trust`]), so a
//! program that grabs the broker's name after a crash learns nothing and
//! cannot pass for the broker.

use std::collections::HashSet;
use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::Dict;
use elicit_proto::trust::{self, NONCE_BYTES, Role};
use serde::{Deserialize, Serialize};
use zbus::zvariant::ObjectPath;

use super::sessions::secret;
use super::{Broker, Caller};
use crate::store::{Batch, now_ms};

/// A front-end registration as stored.
#[derive(Debug, Serialize, Deserialize)]
struct Registration {
    /// What the broker proves it knows.
    secret: String,
    /// The connection that holds it.
    bus_name: String,
    /// When it was issued, in milliseconds since the epoch.
    created_ms: u64,
}

fn check_nonce(nonce: &[u8]) -> Result<(), Error> {
    if (16..=NONCE_BYTES * 2).contains(&nonce.len()) {
        Ok(())
    } else {
        Err(Error::BadArgument(format!(
            "a nonce must be 16 to {} bytes, not {}",
            NONCE_BYTES * 2,
            nonce.len()
        )))
    }
}

fn storage(error: impl std::fmt::Display) -> Error {
    Error::Storage(error.to_string())
}

impl Broker {
    /// This connection's unique name, which every proof is bound to.
    fn own_name(&self) -> String {
        self.conn.unique_name().map(|n| n.to_string()).unwrap_or_default()
    }

    fn resume_token(&self, session: &str) -> Result<String, Error> {
        self.lock()
            .session(session)
            .map(|s| s.record.resume_token.clone())
            .ok_or_else(|| Error::NotFound(format!("no session {session}")))
    }

    /// `ProveSession`: proves the broker knows `session`'s resume token
    /// (an HMAC over the caller's `nonce`), and hands the caller a
    /// challenge to prove the same in `ResumeProven`.
    pub fn prove_session(
        &self,
        caller: &Caller,
        session: &str,
        nonce: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), Error> {
        check_nonce(nonce)?;
        let token = self.resume_token(session)?;
        let proof = trust::proof(&token, Role::BrokerToClient, session, &self.own_name(), nonce);
        let challenge = trust::nonce();
        self.challenges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((caller.name.clone(), session.to_owned()), challenge.clone());
        Ok((proof, challenge))
    }

    /// `ResumeProven`: re-attaches `caller` to `session` once it has
    /// answered the challenge of its last `ProveSession` for it.
    pub async fn resume_proven(&self, caller: &Caller, session: &str, proof: &[u8]) -> Result<String, Error> {
        let challenge = self
            .challenges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(caller.name.clone(), session.to_owned()));
        let Some(challenge) = challenge else {
            return Err(Error::AccessDenied(format!(
                "no challenge is open for session {session}: call ProveSession first"
            )));
        };
        let token = self.resume_token(session)?;
        if !trust::verify(
            &token,
            Role::ClientToBroker,
            session,
            &caller.name,
            &challenge,
            proof,
        ) {
            tracing::warn!(%session, caller = %caller.name, "refused a resume with a wrong proof");
            return Err(Error::AccessDenied(format!("wrong proof for session {session}")));
        }
        self.take_over(caller, session).await
    }

    /// `OpenFrontend`: registers `caller` as a front-end and issues the
    /// registration whose secret this broker (or its restarted self)
    /// proves it knows before the front-end believes it again.
    pub async fn open_frontend(
        self: &Arc<Self>,
        caller: &Caller,
        path: ObjectPath<'_>,
        options: &Dict,
    ) -> Result<(String, String), Error> {
        caller.unsandboxed("register as a front-end")?;
        self.drop_registrations(&caller.name);
        let id = self.store.next_id().to_string();
        let registration = Registration {
            secret: secret(),
            bus_name: caller.name.clone(),
            created_ms: now_ms(),
        };
        let bytes = serde_json::to_vec(&registration).map_err(storage)?;
        let mut batch = Batch::new();
        batch.put_registration(&id, bytes);
        self.store.commit(batch).await?;
        self.register_frontend(caller, path, options)?;
        Ok((id, registration.secret))
    }

    fn registration(&self, id: &str) -> Result<Registration, Error> {
        let bytes = self
            .store
            .registration(id)
            .ok_or_else(|| Error::NotFound(format!("no front-end registration {id}")))?;
        serde_json::from_slice(&bytes).map_err(storage)
    }

    /// `ProveFrontend`: proves the broker knows registration `id`'s secret.
    pub fn prove_frontend(&self, caller: &Caller, id: &str, nonce: &[u8]) -> Result<Vec<u8>, Error> {
        caller.unsandboxed("register as a front-end")?;
        check_nonce(nonce)?;
        let registration = self.registration(id)?;
        Ok(trust::proof(
            &registration.secret,
            Role::BrokerToFrontend,
            id,
            &self.own_name(),
            nonce,
        ))
    }

    /// `ResumeFrontend`: registers `caller` again under registration `id`
    /// (after it has checked this broker's proof).
    pub fn resume_frontend(
        self: &Arc<Self>,
        caller: &Caller,
        path: ObjectPath<'_>,
        options: &Dict,
        id: &str,
    ) -> Result<(), Error> {
        caller.unsandboxed("register as a front-end")?;
        let mut registration = self.registration(id)?;
        if registration.bus_name != caller.name {
            registration.bus_name = caller.name.clone();
            let bytes = serde_json::to_vec(&registration).map_err(storage)?;
            let mut batch = Batch::new();
            batch.put_registration(id, bytes);
            self.store.write_soon(batch);
        }
        self.register_frontend(caller, path, options)
    }

    /// Forgets the registrations `bus_name` holds: it left, and its secret
    /// went with it.
    pub(crate) fn drop_registrations(&self, bus_name: &str) {
        let mut batch = Batch::new();
        for (id, value) in self.store.registrations() {
            if serde_json::from_slice::<Registration>(&value).is_ok_and(|r| r.bus_name == bus_name) {
                batch.remove_registration(&id);
            }
        }
        self.store.write_soon(batch);
    }

    /// At start-up: forgets registrations whose front-end left while the
    /// broker was away; returns the unique names of those still on the
    /// bus, which will register again.
    pub(crate) fn prune_registrations(&self, on_bus: &HashSet<String>) -> HashSet<String> {
        let (kept, gone): (HashSet<String>, HashSet<String>) = self
            .store
            .registrations()
            .into_iter()
            .filter_map(|(_, value)| serde_json::from_slice::<Registration>(&value).ok())
            .map(|r| r.bus_name)
            .partition(|name| on_bus.contains(name));
        for name in gone {
            self.drop_registrations(&name);
        }
        kept
    }

    /// `Watch`: `FormChanged` goes to `caller` until it leaves the bus.
    pub fn watch(&self, caller: &Caller) -> Result<(), Error> {
        caller.unsandboxed("watch forms")?;
        self.watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(caller.name.clone());
        Ok(())
    }

    /// `bus_name` left the bus: its challenges, watch and registrations go.
    pub(crate) fn forget_connection(&self, bus_name: &str) {
        self.challenges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(caller, _), _| caller != bus_name);
        self.watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(bus_name);
        self.drop_registrations(bus_name);
    }
}
