//! Who calls: the bus daemon's word on each new caller's uid, pid and
//! sandbox, cached per unique name until it leaves the bus.

use std::collections::HashMap;
use std::sync::Mutex;

use elicit_proto::Error;
use zbus::names::UniqueName;

use crate::bus::sandbox;
use crate::core::Caller;

/// The credentials of callers seen so far.
pub(super) struct Callers {
    /// The bus daemon, asked for every new caller's credentials: built
    /// once and without a property cache (which would cost an `AddMatch`
    /// and a `GetAll` per proxy, on the path of a caller's first call).
    dbus: zbus::fdo::DBusProxy<'static>,
    own_uid: u32,
    /// A cache of what the bus said, not broker state: it only spares a
    /// round trip per call.
    known: Mutex<HashMap<String, Caller>>,
}

impl Callers {
    pub(super) async fn new(conn: &zbus::Connection) -> Result<Callers, Error> {
        let own_name = conn
            .unique_name()
            .ok_or_else(|| Error::BadArgument("the bus gave this connection no name".into()))?
            .to_owned();
        let dbus = zbus::fdo::DBusProxy::builder(conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let own_uid = dbus
            .get_connection_unix_user(own_name.as_ref().into())
            .await
            .map_err(zbus::Error::from)?;
        Ok(Callers {
            dbus,
            own_uid,
            known: Mutex::new(HashMap::new()),
        })
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Caller>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Identifies the sender of a call and checks it runs as our user.
    pub(super) async fn verify(&self, sender: Option<&UniqueName<'_>>) -> Result<Caller, Error> {
        let sender = sender.ok_or_else(|| Error::AccessDenied("the call has no sender".into()))?;
        let cached = self.known().get(sender.as_str()).cloned();
        let caller = match cached {
            Some(caller) => caller,
            None => {
                let credentials = self
                    .dbus
                    .get_connection_credentials(sender.as_ref().into())
                    .await
                    .map_err(zbus::Error::from)?;
                let uid = credentials
                    .unix_user_id()
                    .ok_or_else(|| Error::AccessDenied("the bus does not know the caller's uid".into()))?;
                let pid = credentials.process_id();
                let caller = Caller {
                    name: sender.to_string(),
                    uid,
                    pid,
                    sandbox: sandbox::detect(pid),
                };
                if let Some(sandbox) = &caller.sandbox {
                    tracing::info!(caller = %caller.name, %sandbox, "a sandboxed caller: it may only ask");
                }
                self.known().insert(caller.name.clone(), caller.clone());
                caller
            }
        };
        if caller.uid != self.own_uid {
            tracing::warn!(caller = %caller.name, uid = caller.uid, "refused a call from another user");
            return Err(Error::AccessDenied(format!(
                "uid {} may not use the broker of uid {}",
                caller.uid, self.own_uid
            )));
        }
        Ok(caller)
    }

    /// `name` left the bus.
    pub(super) fn forget(&self, name: &str) {
        self.known().remove(name);
    }
}
