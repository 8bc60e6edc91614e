//! What the D-Bus objects hold: a way to send calls to the driver and
//! wait for their replies, and the few things served without the core
//! (history and remembered choices, which live in the store).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use elicit_proto::{Elicitation, Error};
use tokio::sync::{mpsc, oneshot};
use zbus::names::UniqueName;

use super::Message;
use super::callers::Callers;
use super::parses::Parses;
use crate::config::Config;
use crate::core::{Call, Caller, ElicitOptions, Input, Reply};
use crate::rules::{NeedsLonger, PolicyVerdict, Rules};
use crate::store::{HistoryRecord, Store};

/// A handle on the driver, for the D-Bus objects.
#[derive(Clone)]
pub struct Handle {
    sender: mpsc::UnboundedSender<Message>,
    callers: Arc<Callers>,
    rules: Option<Arc<Rules>>,
    store: Store,
    config: Arc<Config>,
    /// Where `Elicit` requests are parsed, off the tokio workers.
    parses: Arc<Parses>,
    /// Calls that may open or resume a session and have not reached the
    /// core yet (their caller is being identified): the daemon is not
    /// idle while there is one.
    busy: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

/// A call that may open or resume a session, in progress.
#[derive(Debug)]
pub struct Busy(Arc<AtomicUsize>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Handle {
    pub(super) fn new(
        sender: mpsc::UnboundedSender<Message>,
        callers: Callers,
        rules: Option<Arc<Rules>>,
        store: Store,
        config: Arc<Config>,
    ) -> Handle {
        Handle {
            sender,
            callers: Arc::new(callers),
            rules,
            store,
            config,
            parses: Arc::default(),
            busy: Arc::default(),
        }
    }

    pub(super) fn input(&self, input: Input) {
        // The driver is gone only when the daemon stops.
        let _stopping = self.sender.send(Message::Input(input));
    }

    pub(super) fn busy_count(&self) -> &AtomicUsize {
        &self.busy
    }

    /// Marks a call that may open or resume a session as running, until
    /// the guard drops; take it before the call's first `.await`.
    pub fn busy(&self) -> Busy {
        self.busy.fetch_add(1, Ordering::SeqCst);
        Busy(self.busy.clone())
    }

    /// Identifies the sender of a call and checks it runs as our user.
    pub async fn caller(&self, sender: Option<&UniqueName<'_>>) -> Result<Caller, Error> {
        self.callers.verify(sender).await
    }

    /// `name` left the bus.
    pub fn name_lost(&self, name: &str) {
        self.callers.forget(name);
        self.parses.forget(name);
        self.input(Input::NameLost(name.to_owned()));
    }

    /// Hands `call` to the core and waits for its reply.
    pub async fn call(&self, caller: &Caller, call: Call) -> Result<Reply, Error> {
        let (reply, result) = oneshot::channel();
        let message = Message::Call {
            caller: caller.clone(),
            call,
            reply,
        };
        if self.sender.send(message).is_err() {
            return Err(stopping());
        }
        result.await.unwrap_or_else(|_| Err(stopping()))
    }

    /// `Elicit`: the request is parsed and the rules decide here, off the
    /// driver (a rule may run up to its budget), then the core queues it.
    pub async fn elicit(
        &self,
        caller: &Caller,
        session: &str,
        request_json: &str,
        options: ElicitOptions,
    ) -> Result<String, Error> {
        // Cheap refusals first, ownership first of all: another client's
        // session learns nothing of what is wrong with its request. Then
        // the quotas and the byte budget, then the request's size: nothing
        // is parsed for a form that would be refused anyway.
        let admissible = Call::Admissible {
            session: session.to_owned(),
            bytes: request_json.len(),
            submission_id: options.submission_id.clone(),
        };
        let origin = match self.call(caller, admissible).await? {
            Reply::Origin(origin) => origin,
            other => return Err(unexpected(&other)),
        };
        let limits = &self.config.limits;
        if request_json.len() > limits.max_request_bytes {
            // The same refusal the parse would give, without a copy.
            Elicitation::parse_str(request_json, limits)?;
        }
        let (request, text) = self.parses.parse(&caller.name, request_json, limits).await?;
        let (request, verdict) = self.run_policy(request, origin, session).await;
        // A rule's accept gets the schema's defaults like any other answer.
        let verdict = verdict.map(|mut verdict| {
            verdict.answer = verdict.answer.completed(&request);
            verdict
        });
        let call = Call::Elicit {
            session: session.to_owned(),
            request: Arc::new(request.without_raw()),
            text,
            options,
            verdict,
        };
        match self.call(caller, call).await? {
            Reply::Path(path) => Ok(path),
            other => Err(unexpected(&other)),
        }
    }

    /// Asks the rules; `None` leaves the form to a human. Rules that
    /// decide within [`crate::rules::QUICK`] decide here; the rest run
    /// again on tokio's blocking pool, since a runaway rule may run up to
    /// its budget (2 s) and no tokio worker may be held that long.
    async fn run_policy(
        &self,
        request: Elicitation,
        origin: elicit_proto::dbus::Origin,
        session: &str,
    ) -> (Elicitation, Option<PolicyVerdict>) {
        let Some(policy) = self.rules.clone() else {
            return (request, None);
        };
        let quickly = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            policy.decide_quickly(&request, &origin, session)
        }));
        match quickly {
            Ok(Ok(verdict)) => return (request, verdict),
            Ok(Err(NeedsLonger)) => {}
            Err(_) => {
                // As on the blocking pool below: a rule that panics
                // decides nothing.
                tracing::error!("the rules panicked; asking the human");
                return (request, None);
            }
        }
        let session = session.to_owned();
        let shared = Arc::new(request);
        let asked = shared.clone();
        let verdict = tokio::task::spawn_blocking(move || policy.decide(&asked, &origin, &session))
            .await
            .unwrap_or_else(|error| {
                // A rule that panics decides nothing: the human is asked,
                // as when a rule fails.
                tracing::error!(%error, "the rules panicked; asking the human");
                None
            });
        let request = Arc::try_unwrap(shared).unwrap_or_else(|shared| (*shared).clone());
        (request, verdict)
    }

    /// `Answer`: once the answer won, a remembered choice is stored.
    pub async fn answer(&self, caller: &Caller, call: Call) -> Result<(), Error> {
        match self.call(caller, call).await? {
            Reply::Done => Ok(()),
            Reply::Remember { target, answer } => {
                let Some(rules) = &self.rules else { return Ok(()) };
                let choice = rules
                    .remember(
                        &target.server,
                        target.exe.as_deref(),
                        target.cwd.as_deref(),
                        &answer,
                    )
                    .await?;
                tracing::info!(choice, server = %target.server, "answer remembered");
                Ok(())
            }
            other => Err(unexpected(&other)),
        }
    }

    /// A call whose reply carries nothing.
    pub async fn done(&self, caller: &Caller, call: Call) -> Result<(), Error> {
        match self.call(caller, call).await? {
            Reply::Done => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// The newest `limit` history records, newest first.
    pub async fn history(&self, limit: usize) -> Result<Vec<HistoryRecord>, Error> {
        Ok(self.store.history(limit).await?)
    }

    /// The remembered choices, as JSON.
    pub fn remembered(&self) -> Result<serde_json::Value, Error> {
        let choices = match &self.rules {
            Some(rules) => rules.remembered(),
            None => Vec::new(),
        };
        serde_json::to_value(choices).map_err(|e| Error::Storage(e.to_string()))
    }

    /// Forgets a remembered choice; false if there was none.
    pub async fn forget(&self, id: u64) -> Result<bool, Error> {
        match &self.rules {
            Some(rules) => rules.forget(id).await,
            None => Ok(false),
        }
    }
}

/// A reply of another kind than the call's: a bug.
pub fn unexpected(_reply: &Reply) -> Error {
    tracing::error!("the core replied with the wrong kind of value");
    Error::Storage("the broker replied with the wrong kind of value".into())
}

/// A call that found the driver ended, or that it dropped unanswered as
/// it ended (what it asked may be stored: a submission tried again under
/// its submission id finds its form).
fn stopping() -> Error {
    Error::Stopping("it ended before replying; the next daemon takes the call".into())
}
