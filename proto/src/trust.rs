//! Telling the real broker from a program that took its name.
//!
//! Any same-uid program can own `dev.elicitd.Broker` once elicitd is gone
//! (after a crash, before it is restarted). Clients and front-ends hold a
//! secret the real broker gave them (a session's resume token, a
//! front-end's registration secret) and, whenever the name changes owner,
//! believe the new owner only after it proves it knows that secret:
//! HMAC-SHA256 over a fresh nonce of theirs, bound to the prover's unique
//! bus name (so that a proof cannot be replayed or relayed by another
//! connection). The secret itself never crosses the bus again.

use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::Sha256;
use zbus::message::Header;
use zbus::zvariant::DynamicType;

use crate::dbus::{BROKER_PATH, BUS_NAME};

/// The length of a nonce, in bytes.
pub const NONCE_BYTES: usize = 32;

/// Who proves: the broker, to a client or a front-end, or a client to the
/// broker. Each role signs different bytes, so one proof never serves as
/// another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The broker proves it knows a session's resume token.
    BrokerToClient,
    /// The client proves it knows its session's resume token.
    ClientToBroker,
    /// The broker proves it knows a front-end's registration secret.
    BrokerToFrontend,
}

impl Role {
    fn label(self) -> &'static [u8] {
        match self {
            Role::BrokerToClient => b"broker-to-client",
            Role::ClientToBroker => b"client-to-broker",
            Role::BrokerToFrontend => b"broker-to-frontend",
        }
    }
}

/// A fresh random nonce.
pub fn nonce() -> Vec<u8> {
    let bytes: [u8; NONCE_BYTES] = rand::rng().random();
    bytes.to_vec()
}

/// HMAC-SHA256 under `secret` of the role, the subject (a session or
/// registration id), the prover's unique bus name and the nonce, each
/// length-prefixed so that no two inputs share their bytes.
pub fn proof(secret: &str, role: Role, subject: &str, prover: &str, nonce: &[u8]) -> Vec<u8> {
    // An empty proof is never verified.
    mac(secret, role, subject, prover, nonce)
        .map(|mac| mac.finalize().into_bytes().to_vec())
        .unwrap_or_default()
}

/// Whether `proof` is [`proof`] of these inputs (compared in constant time).
pub fn verify(secret: &str, role: Role, subject: &str, prover: &str, nonce: &[u8], proof: &[u8]) -> bool {
    mac(secret, role, subject, prover, nonce).is_some_and(|mac| mac.verify_slice(proof).is_ok())
}

/// `None` only if the key were refused, which HMAC never does (it takes
/// keys of any length); callers then fail closed.
fn mac(secret: &str, role: Role, subject: &str, prover: &str, nonce: &[u8]) -> Option<Hmac<Sha256>> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).ok()?;
    for part in [
        b"elicitd-proof-v1".as_slice(),
        role.label(),
        subject.as_bytes(),
        prover.as_bytes(),
        nonce,
    ] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    Some(mac)
}

/// Why a broker was not believed.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The call failed (no broker, or it refused).
    #[error(transparent)]
    Bus(#[from] zbus::Error),
    /// The owner of the name answered with a wrong proof.
    #[error(
        "the program that now owns {BUS_NAME} ({who}) could not prove it is the elicitd that \
         issued this secret: it is not believed and gets nothing. If elicitd crashed, stop that \
         program and start elicitd again"
    )]
    Impostor {
        /// Its unique bus name and, where the bus knows it, its PID.
        who: String,
    },
}

/// Calls `method` of `Broker1` on the owner of the broker's name and
/// returns the reply's body with the unique name of the connection that
/// sent it: that is who any proof in the body must be bound to.
pub async fn call_broker<B, R>(conn: &zbus::Connection, method: &str, body: &B) -> zbus::Result<(R, String)>
where
    B: serde::Serialize + DynamicType,
    R: zbus::zvariant::Type + serde::de::DeserializeOwned,
{
    let reply = conn
        .call_method(
            Some(BUS_NAME),
            BROKER_PATH,
            Some("dev.elicitd.Broker1"),
            method,
            body,
        )
        .await?;
    // A peer-to-peer connection (elicitd's asker socket) has no names: its
    // one peer is the daemon, vouched for by the socket itself.
    let sender = match reply.header().sender() {
        Some(sender) => sender.to_string(),
        None if !conn.is_bus() => String::new(),
        None => return Err(zbus::Error::Failure("a reply without a sender".into())),
    };
    Ok((reply.body().deserialize()?, sender))
}

/// Describes the connection `unique` for an error: its name and PID.
pub async fn describe_connection(conn: &zbus::Connection, unique: &str) -> String {
    let pid = async {
        let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
        let name = zbus::names::BusName::try_from(unique.to_owned()).ok()?;
        dbus.get_connection_unix_process_id(name).await.ok()
    }
    .await;
    match pid {
        Some(pid) => format!("bus name {unique}, PID {pid}"),
        None => format!("bus name {unique}"),
    }
}

/// The unique name of the broker a front-end has verified, shared by its
/// `Frontend1` object (which takes calls from it alone) and its link.
#[derive(Debug, Clone, Default)]
pub struct TrustedBroker(std::sync::Arc<std::sync::Mutex<Option<String>>>);

impl TrustedBroker {
    /// Believes `unique` from now on (`None`: nobody).
    pub fn set(&self, unique: Option<String>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = unique;
    }

    /// The believed broker, if any.
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Refuses a call unless it comes from the believed broker: any
    /// program on the bus can call a front-end's object, and the current
    /// owner of the name may be an impostor.
    pub fn check(&self, header: &Header<'_>) -> zbus::fdo::Result<()> {
        match (header.sender(), self.get()) {
            (Some(sender), Some(trusted)) if sender.as_str() == trusted => Ok(()),
            _ => Err(zbus::fdo::Error::AccessDenied(
                "only the elicitd this front-end registered with may call this".into(),
            )),
        }
    }
}

/// A front-end's registration with the broker: the id and secret the
/// broker issued, and the broker believed now.
#[derive(Debug, Clone, Default)]
pub struct FrontendRegistration {
    issued: std::sync::Arc<std::sync::Mutex<Option<(String, String)>>>,
    trusted: TrustedBroker,
}

impl FrontendRegistration {
    /// The broker this front-end believes, for its `Frontend1` object.
    pub fn trusted(&self) -> TrustedBroker {
        self.trusted.clone()
    }

    /// Believes nobody until the next successful [`Self::register`] (the
    /// broker's name lost its owner).
    pub fn distrust(&self) {
        self.trusted.set(None);
    }

    /// Registers the front-end served at `path` with `options`. The first
    /// time, with `OpenFrontend`, which issues the registration secret;
    /// after that only with a broker that proves it knows that secret,
    /// and only then does the front-end take its calls (`Show`).
    pub async fn register(
        &self,
        conn: &zbus::Connection,
        path: &str,
        options: crate::dbus::Dict,
    ) -> Result<(), ProofError> {
        self.trusted.set(None);
        let path = zbus::zvariant::ObjectPath::try_from(path).map_err(zbus::Error::from)?;
        let issued = self.issued.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match issued {
            None => {
                // Believe the current owner before the call: it may call
                // `Show` before its reply to `OpenFrontend` arrives.
                let dbus = zbus::fdo::DBusProxy::new(conn).await?;
                let name = zbus::names::BusName::try_from(BUS_NAME).map_err(zbus::Error::from)?;
                let owner = dbus
                    .get_name_owner(name)
                    .await
                    .map_err(zbus::Error::from)?
                    .to_string();
                self.trusted.set(Some(owner.clone()));
                let (issued, broker): ((String, String), String) =
                    call_broker(conn, "OpenFrontend", &(path, options)).await?;
                if broker != owner {
                    self.trusted.set(None);
                    return Err(zbus::Error::Failure(
                        "the broker's name changed owner while registering".into(),
                    )
                    .into());
                }
                *self.issued.lock().unwrap_or_else(|p| p.into_inner()) = Some(issued);
            }
            Some((id, secret)) => {
                let nonce = nonce();
                let (proof, prover): (Vec<u8>, String) =
                    call_broker(conn, "ProveFrontend", &(id.as_str(), nonce.as_slice())).await?;
                if !verify(&secret, Role::BrokerToFrontend, &id, &prover, &nonce, &proof) {
                    let who = describe_connection(conn, &prover).await;
                    return Err(ProofError::Impostor { who });
                }
                self.trusted.set(Some(prover.clone()));
                conn.call_method(
                    Some(prover.as_str()),
                    BROKER_PATH,
                    Some("dev.elicitd.Broker1"),
                    "ResumeFrontend",
                    &(path, options, id.as_str()),
                )
                .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_only_for_its_own_inputs() {
        let nonce = nonce();
        let good = proof("secret", Role::BrokerToClient, "7", ":1.4", &nonce);
        assert!(verify("secret", Role::BrokerToClient, "7", ":1.4", &nonce, &good));
        assert!(!verify("other", Role::BrokerToClient, "7", ":1.4", &nonce, &good));
        assert!(!verify(
            "secret",
            Role::ClientToBroker,
            "7",
            ":1.4",
            &nonce,
            &good
        ));
        assert!(!verify(
            "secret",
            Role::BrokerToClient,
            "8",
            ":1.4",
            &nonce,
            &good
        ));
        assert!(!verify(
            "secret",
            Role::BrokerToClient,
            "7",
            ":1.5",
            &nonce,
            &good
        ));
        assert!(!verify(
            "secret",
            Role::BrokerToClient,
            "7",
            ":1.4",
            &super::nonce(),
            &good
        ));
        // Length prefixes: moving a byte from one field to the next changes the proof.
        assert!(!verify(
            "secret",
            Role::BrokerToClient,
            "7:",
            "1.4",
            &nonce,
            &good
        ));
    }
}
