//! The driver: one task that owns the [`Core`] and does what it says.
//!
//! The D-Bus objects turn calls into [`Call`]s sent here with a reply
//! channel ([`Handle`]); nothing else reads or writes broker state. The
//! loop takes one input at a time (a call, a batch stored or failed, a
//! `Show` that failed, a name lost, the timer), hands it to the core with
//! the time, and carries out the effects in order: batches go to the
//! storage thread, replies to their callers, calls out to front-ends and
//! signals to their tasks. One timer serves everything, from
//! [`Core::next_timeout`].

mod call_order;
mod callers;
mod effects;
mod handle;
mod launch;
mod parses;
mod signals;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use elicit_proto::Error;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use zbus::Connection;

pub use effects::info_dict;
pub use handle::{Handle, unexpected};

use crate::config::Config;
use crate::core::{Call, CallId, Caller, Core, Effect, Input, Registration, Reply, Restored};
use crate::launcher::Launcher;
use crate::rules::Rules;
use crate::store::{Loaded, Store, now_ms};

/// How many `Show`/`Withdraw` calls may wait for replies at once. The bus
/// refuses a connection more pending replies than its limit (128 by
/// default), and a refused `Show` would count its front-end as gone: a
/// thousand sessions presented at once must queue here instead.
const CALLS_OUT: usize = 64;

/// How long a daemon that starts while front-ends it served are still on
/// the bus waits for them to register again before it starts a front-end
/// program itself; they need two round trips (prove, resume), so this is
/// for a loaded machine.
const RETURNING_FRONTENDS: Duration = Duration::from_secs(2);

/// What reaches the driver.
enum Message {
    /// A call, with where its reply goes.
    Call {
        caller: Caller,
        call: Call,
        reply: oneshot::Sender<Result<Reply, Error>>,
    },
    /// Anything else.
    Input(Input),
}

/// Why the driver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Idle, with the bus name given up.
    Idle,
    /// Every handle is gone.
    Closed,
}

/// The driver's state: the core and the means to carry out its effects.
pub struct Driver {
    core: Core,
    config: Arc<Config>,
    store: Store,
    conn: Connection,
    handle: Handle,
    inputs: mpsc::UnboundedReceiver<Message>,
    launcher: Launcher,
    /// Forms whose owners were told that nobody shows them.
    told_unseen: HashSet<u64>,
    /// When the wait for returning front-ends ends.
    returning_until: Option<tokio::time::Instant>,
    next_call: CallId,
    replies: HashMap<CallId, oneshot::Sender<Result<Reply, Error>>>,
    /// Calls out to front-ends and batches in flight: owned, ended with
    /// the driver.
    tasks: JoinSet<()>,
    calls_out: Arc<tokio::sync::Semaphore>,
    /// Calls to one front-end in the core's order.
    call_order: call_order::CallOrder,
    signals: signals::Signals,
    stopped: Option<Stopped>,
}

impl Driver {
    /// A driver serving on `conn` (the bus `bus`, where not the session
    /// bus of the environment) over `store`; `exit_on_idle` false keeps
    /// the daemon running when idle.
    pub async fn new(
        config: Config,
        store: Store,
        conn: Connection,
        bus: Option<String>,
        rules: Option<Arc<Rules>>,
        exit_on_idle: bool,
    ) -> Result<Driver, Error> {
        let own_name = conn
            .unique_name()
            .ok_or_else(|| Error::BadArgument("the bus gave this connection no name".into()))?
            .to_string();
        let callers = callers::Callers::new(&conn).await?;
        let seed: [u8; 32] = rand::random();
        let mut core = Core::new(config.clone(), own_name, seed, now_ms());
        if !exit_on_idle {
            core.never_idle();
        }
        let config = Arc::new(config);
        let (sender, inputs) = mpsc::unbounded_channel();
        let handle = Handle::new(sender, callers, rules, store.clone(), config.clone());
        let (signals, task) = signals::Signals::start(conn.clone());
        let mut tasks = JoinSet::new();
        tasks.spawn(task);
        Ok(Driver {
            core,
            launcher: Launcher::new(&config.frontends, bus),
            told_unseen: HashSet::new(),
            config,
            store,
            conn,
            handle,
            inputs,
            returning_until: None,
            next_call: 1,
            replies: HashMap::new(),
            tasks,
            calls_out: Arc::new(tokio::sync::Semaphore::new(CALLS_OUT)),
            call_order: call_order::CallOrder::default(),
            signals,
            stopped: None,
        })
    }

    /// A handle for the D-Bus objects.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Loads what was durable into the core (presented forms return to
    /// their queues, departed owners get their grace period). Returns
    /// (sessions, forms) restored.
    pub async fn restore(&mut self, loaded: Loaded) -> Result<(usize, usize), Error> {
        // One ListNames instead of a NameHasOwner per session: a restart
        // with a thousand sessions must not cost a thousand round trips.
        let dbus = zbus::fdo::DBusProxy::new(&self.conn).await?;
        let on_bus: HashSet<String> = dbus
            .list_names()
            .await
            .map_err(zbus::Error::from)?
            .into_iter()
            .map(|name| name.to_string())
            .collect();
        let registrations = loaded
            .registrations
            .iter()
            .filter_map(|(id, bytes)| {
                serde_json::from_slice::<Registration>(bytes)
                    .ok()
                    .map(|r| (id.clone(), r))
            })
            .collect();
        let restored = Restored {
            sessions: loaded.sessions,
            forms: loaded.forms,
            answer_files: loaded.answer_files,
            registrations,
            next_id: self.store.next_id(),
        };
        let (counts, effects) = self.core.restore(now_ms(), restored, &on_bus);
        self.perform(effects).await;
        Ok(counts)
    }

    /// Serves until the daemon exits idle or every handle is gone.
    pub async fn run(mut self) -> Stopped {
        loop {
            while self.tasks.try_join_next().is_some() {}
            if let Some(stopped) = self.stopped {
                return stopped;
            }
            let timer = self
                .core
                .next_timeout()
                .map(|at| tokio::time::Instant::now() + Duration::from_millis(at.saturating_sub(now_ms())));
            let input = tokio::select! {
                message = self.inputs.recv() => match message {
                    None => return Stopped::Closed,
                    Some(Message::Input(input)) => input,
                    Some(Message::Call { caller, call, reply }) => {
                        let id = self.next_call;
                        self.next_call += 1;
                        self.replies.insert(id, reply);
                        Input::Call { id, caller, call }
                    }
                },
                () = sleep_until(timer) => Input::Timer,
                () = sleep_until(self.returning_until) => {
                    self.returning_until = None;
                    if !self.launcher.end_grace() {
                        continue;
                    }
                    Input::DispatchAll
                }
            };
            let effects = self.core.handle(now_ms(), input);
            self.perform(effects).await;
        }
    }

    /// Carries out `effects` in order.
    async fn perform(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            self.effect(effect).await;
        }
    }
}

/// Resolves at `at`, or never.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
