//! The broker: sessions, the durable queue, dispatch to front-ends.
//!
//! One [`Broker`] serves the whole bus. Its state sits behind one
//! synchronous lock that is never held across an `.await`: every operation
//! decides under the lock, then writes, flushes, emits and calls out after
//! releasing it.

mod at_rest;
mod delivery;
mod dispatch;
mod forms;
mod handoff;
mod idle;
mod remember;
mod restore;
mod retire;
mod sandbox;
mod sessions;
pub mod state;
mod timer;
mod trust;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, OriginDict};
use zbus::Connection;
use zbus::names::UniqueName;

use crate::config::Config;
use crate::launcher::Launcher;
use crate::rules::Rules;
use crate::store::Store;
use state::State;

/// Who called: verified by the bus daemon, never taken from the caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The caller's unique bus name.
    pub name: String,
    /// The caller's uid.
    pub uid: u32,
    /// The caller's pid, where the bus knows it.
    pub pid: Option<u32>,
    /// The sandbox it runs in (Flatpak, Snap), described; `None` when it
    /// runs unconfined.
    pub sandbox: Option<String>,
}

impl Caller {
    /// Refuses `what` to a sandboxed caller: it may ask, nothing more.
    pub fn unsandboxed(&self, what: &str) -> Result<(), Error> {
        match &self.sandbox {
            Some(sandbox) => Err(Error::AccessDenied(format!(
                "{sandbox} is sandboxed: it may ask, but not {what}"
            ))),
            None => Ok(()),
        }
    }
}

/// The broker shared by every D-Bus object of the daemon.
pub struct Broker {
    config: Config,
    store: Store,
    conn: Connection,
    /// The bus daemon, asked for every new caller's credentials: built
    /// once and without a property cache (which would cost an `AddMatch`
    /// and a `GetAll` per proxy, on the path of a caller's first call).
    dbus: zbus::fdo::DBusProxy<'static>,
    own_uid: u32,
    state: Mutex<State>,
    callers: Mutex<HashMap<String, Caller>>,
    /// Proof challenges handed out, by (caller, session): one open
    /// challenge per session a connection re-attaches to.
    challenges: Mutex<HashMap<(String, String), Vec<u8>>>,
    /// Connections that asked for `FormChanged` (`Watch`); the signal goes
    /// to each of them alone, never to the whole bus.
    watchers: Arc<Mutex<std::collections::BTreeSet<String>>>,
    launcher: Launcher,
    policy: Option<Arc<Rules>>,
    events: tokio::sync::mpsc::UnboundedSender<dispatch::FormEvent>,
    /// Calls out to front-ends in flight at once. The bus refuses a
    /// connection more pending replies than its limit (128 by default), and
    /// a refused `Show` would count its front-end as gone: a thousand
    /// sessions presented at once must queue here instead.
    calls_out: Arc<tokio::sync::Semaphore>,
    /// Every form's deadline, served by one timer task.
    deadlines: Arc<timer::Deadlines>,
    /// The tasks the broker spawned, ended by [`Broker::stop`].
    tasks: timer::Tasks,
    /// What keeps the daemon from exiting idle, and since when.
    idleness: idle::Idleness,
}

/// How many `Show`/`Withdraw` calls may wait for replies at once.
const CALLS_OUT: usize = 64;

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// A broker over `store`, serving on `conn`; call [`Broker::restore`]
    /// before taking the bus name.
    pub async fn new(
        config: Config,
        store: Store,
        conn: Connection,
        policy: Option<Arc<Rules>>,
    ) -> Result<Arc<Broker>, Error> {
        let own_name = conn
            .unique_name()
            .ok_or_else(|| Error::BadArgument("the bus gave this connection no name".into()))?
            .to_owned();
        let dbus = zbus::fdo::DBusProxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let own_uid = dbus
            .get_connection_unix_user(own_name.as_ref().into())
            .await
            .map_err(zbus::Error::from)?;
        let launcher = Launcher::new(&config.frontends);
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let watchers = Arc::new(Mutex::new(Default::default()));
        let tasks = timer::Tasks::default();
        tasks.spawn(dispatch::emit_form_events(
            conn.clone(),
            receiver,
            watchers.clone(),
        ));
        let broker = Arc::new(Broker {
            events,
            config,
            store,
            conn,
            dbus,
            own_uid,
            state: Mutex::new(State::default()),
            callers: Mutex::new(HashMap::new()),
            challenges: Mutex::new(HashMap::new()),
            watchers,
            launcher,
            policy,
            calls_out: Arc::new(tokio::sync::Semaphore::new(CALLS_OUT)),
            deadlines: Arc::default(),
            tasks,
            idleness: idle::Idleness::default(),
        });
        broker.spawn(timer::run_timer(
            Arc::downgrade(&broker),
            broker.deadlines.clone(),
        ));
        Ok(broker)
    }

    /// The bus connection.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Makes every write durable, including those left to a delayed flush;
    /// for an orderly stop.
    pub async fn flush(&self) -> Result<(), Error> {
        Ok(self.store.flush().await?)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state as it was at the
        // panic; serving on beats refusing every later call.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Identifies the sender of a call and checks it runs as our user.
    pub async fn caller(&self, sender: Option<&UniqueName<'_>>) -> Result<Caller, Error> {
        let sender = sender.ok_or_else(|| Error::AccessDenied("the call has no sender".into()))?;
        let cached = self
            .callers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(sender.as_str())
            .cloned();
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
                self.callers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(caller.name.clone(), caller.clone());
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

    /// A bus name left the bus: forget what it registered, and start the
    /// grace period of the sessions it owned.
    pub fn name_lost(self: &Arc<Self>, name: &str) {
        self.callers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name);
        self.forget_connection(name);
        self.frontend_lost(name);
        self.owner_lost(name);
    }

    /// The newest `limit` history records, newest first.
    pub async fn history(&self, limit: usize) -> Result<Vec<crate::store::HistoryRecord>, Error> {
        Ok(self.store.history(limit).await?)
    }

    /// The remembered choices, as JSON.
    pub fn remembered(&self) -> Result<serde_json::Value, Error> {
        let choices = match &self.policy {
            Some(rules) => rules.remembered(),
            None => Vec::new(),
        };
        serde_json::to_value(choices).map_err(|e| Error::Storage(e.to_string()))
    }

    /// Forgets a remembered choice; false if there was none.
    pub async fn forget(&self, id: u64) -> Result<bool, Error> {
        match &self.policy {
            Some(rules) => rules.forget(id).await,
            None => Ok(false),
        }
    }

    /// Counts for `elicit status` and the D-Bus properties.
    pub fn counts(&self) -> (usize, usize, usize) {
        self.lock().counts()
    }
}

/// Hands `form` to `presenter` and builds the `info` dictionary that goes
/// with it to a front-end or claimer.
fn present(form: &mut state::Form, presenter: state::Presenter, origin: &elicit_proto::dbus::Origin) -> Dict {
    form.presenter = Some(presenter);
    form.record.state = crate::store::FormState::Presented;
    let mut info = origin.to_dict();
    info.insert(
        "session".into(),
        zbus::zvariant::Str::from(form.record.session.clone()).into(),
    );
    info.insert("queued-at-ms".into(), form.record.created_ms.into());
    info.insert("deadline-ms".into(), form.record.deadline_ms.unwrap_or(0).into());
    info
}

pub use forms::{ElicitOptions, action_name};
pub use remember::Remember;
