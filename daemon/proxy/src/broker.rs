//! The proxy's one broker session, owned by one task.
//!
//! Every form the server asks is submitted at once, in the order it was
//! asked, however many are already open: the broker queues them durably,
//! presents one per session at a time, and `elicit list` and the
//! front-ends see the waiting ones. The actor then waits for whichever
//! outcome comes next. The session is opened lazily, at the first form, so
//! that its origin already names the host and the server, and so that a
//! proxy whose server never elicits never starts (or activates) elicitd.
//! It is closed again once its forms are done (answered and acknowledged,
//! or withdrawn) and no other came for [`SESSION_LINGER`]: an open session
//! keeps elicitd running, and an agent that stopped asking must not.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use elicit_proto::dbus::Origin;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{AbortHandle, JoinSet};
use zbus::zvariant::OwnedObjectPath;

use super::cancel::Cancel;
use elicit_client::{ClientSession, FormEvent, connect};

pub use super::decide::Reply;

struct Job {
    request_json: String,
    /// The form's deadline, in seconds: the broker cancels it then.
    timeout_secs: Option<u64>,
    cancel: Cancel,
    reply: oneshot::Sender<Reply>,
    unseen: oneshot::Sender<Unseen>,
}

/// The broker's word that nobody shows a submitted form, and no front-end
/// program could be started for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    /// The form's id, as `elicit list` and `elicit answer` name it.
    pub form: String,
    /// Why, in the broker's words.
    pub why: String,
}

enum Message {
    Ask(Job),
    /// The host went away: nobody can receive an answer any more.
    HostGone,
}

/// A handle to the broker actor; cheap to clone.
#[derive(Debug, Clone)]
pub struct Broker {
    messages: mpsc::UnboundedSender<Message>,
}

impl Broker {
    /// The actor and a handle to it; whoever runs the relay runs the
    /// actor (it ends once every handle is gone). `origin` is read when the
    /// session opens.
    pub fn start(
        bus: Option<String>,
        origin: Arc<Mutex<Origin>>,
    ) -> (Broker, impl Future<Output = ()> + Send) {
        let (messages, receiver) = mpsc::unbounded_channel();
        (Broker { messages }, Actor::new(bus, origin).run(receiver))
    }

    /// Submits `request_json` (`elicitation/create` params) at once, in
    /// the order of the calls; the future resolves to the outcome.
    /// `cancel` withdraws the form; after `timeout_secs` the broker cancels
    /// it (reason `timeout`) and the answer is `cancel`. The receiver gets
    /// the broker's word if the form waits with nobody to show it (it is
    /// dropped unsent otherwise).
    pub fn submit(
        &self,
        request_json: String,
        timeout_secs: Option<u64>,
        cancel: Cancel,
    ) -> (
        impl Future<Output = Reply> + Send + 'static,
        oneshot::Receiver<Unseen>,
    ) {
        let (reply, answer) = oneshot::channel();
        let (unseen, unseen_rx) = oneshot::channel();
        let job = Job {
            request_json,
            timeout_secs,
            cancel,
            reply,
            unseen,
        };
        let sent = self.messages.send(Message::Ask(job)).is_ok();
        let reply = async move {
            if !sent {
                return Reply::Unavailable("the broker task has stopped".into());
            }
            answer
                .await
                .unwrap_or_else(|_| Reply::Unavailable("the broker task has stopped".into()))
        };
        (reply, unseen_rx)
    }

    /// The host is gone: the session's bus connection closes at once, so
    /// that elicitd withdraws every form of it as `client-gone` (after its
    /// short grace), whatever the server does meanwhile; later forms are
    /// never shown.
    pub fn host_gone(&self) {
        let _ = self.messages.send(Message::HostGone);
    }
}

/// How long a submission waits for a broker that died before replying to
/// come back, before the elicitation gets the no-broker fallback.
const RESTART_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a session with nothing pending stays open for the next form:
/// a server asking several forms one after the other keeps one session
/// (opening one costs a durable write), and a second of it keeps elicitd
/// alive no longer than its own idle period would anyway.
pub const SESSION_LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// A submitted form waiting for its outcome.
struct Pending {
    reply: oneshot::Sender<Reply>,
    /// Taken when the broker says nobody shows the form.
    unseen: Option<oneshot::Sender<Unseen>>,
    /// Reports the asker's cancellation to the actor; aborted once the
    /// form has its outcome.
    watcher: AbortHandle,
}

struct Actor {
    bus: Option<String>,
    origin: Arc<Mutex<Origin>>,
    session: Option<ClientSession>,
    /// The connection must outlive the session that uses it.
    conn: Option<zbus::Connection>,
    pending: HashMap<String, Pending>,
    cancelled_tx: mpsc::UnboundedSender<OwnedObjectPath>,
    cancelled_rx: mpsc::UnboundedReceiver<OwnedObjectPath>,
    counter: u64,
    host_gone: bool,
    /// The watchers of the pending forms' cancellations.
    watchers: JoinSet<()>,
    /// When the last pending form was done; the session closes
    /// [`SESSION_LINGER`] later unless another form comes.
    done_at: Option<tokio::time::Instant>,
}

impl Actor {
    fn new(bus: Option<String>, origin: Arc<Mutex<Origin>>) -> Actor {
        let (cancelled_tx, cancelled_rx) = mpsc::unbounded_channel();
        Actor {
            bus,
            origin,
            session: None,
            conn: None,
            pending: HashMap::new(),
            cancelled_tx,
            cancelled_rx,
            counter: 0,
            host_gone: false,
            watchers: JoinSet::new(),
            done_at: None,
        }
    }

    async fn run(mut self, mut messages: mpsc::UnboundedReceiver<Message>) {
        loop {
            let waiting = !self.pending.is_empty() && self.session.is_some();
            let lingering = match self.done_at {
                Some(done) if self.pending.is_empty() && self.session.is_some() => {
                    Some(done + SESSION_LINGER)
                }
                _ => None,
            };
            tokio::select! {
                // Messages first: `host_gone` is sent before the relay
                // fires the forms' cancellations, and must win over them,
                // so that the forms go as `client-gone`, not `closed`.
                biased;
                message = messages.recv() => match message {
                    Some(Message::Ask(job)) => self.submit(job).await,
                    Some(Message::HostGone) => self.on_host_gone().await,
                    None => break,
                },
                Some(form) = self.cancelled_rx.recv() => self.withdraw(&form).await,
                event = next_event(self.session.as_mut()), if waiting => match event {
                    Ok(FormEvent::Unseen(form, why)) => {
                        let sender = self.pending.get_mut(form.as_str()).and_then(|p| p.unseen.take());
                        if let Some(sender) = sender {
                            let id = form.as_str().rsplit('/').next().unwrap_or_default().to_owned();
                            let _ = sender.send(Unseen { form: id, why });
                        }
                    }
                    Ok(FormEvent::Answered(form, outcome)) => {
                        if let Some(pending) = self.pending.remove(form.as_str()) {
                            pending.watcher.abort();
                            let _ = pending.reply.send(Reply::Answered {
                                action: outcome.action,
                                content: outcome.content,
                            });
                        }
                    }
                    Err(error) => self.lost(&error.to_string()),
                },
                () = sleep_until(lingering), if lingering.is_some() => self.close_session().await,
                // Forgets watchers that have ended.
                Some(_) = self.watchers.join_next(), if !self.watchers.is_empty() => {}
            }
            if self.pending.is_empty() && self.done_at.is_none() {
                self.done_at = Some(tokio::time::Instant::now());
            }
        }
        // Every handle is gone: the proxy is shutting down.
        if let Some(session) = self.session.take()
            && let Err(error) = session.close().await
        {
            tracing::debug!(%error, "closing the broker session failed");
        }
    }

    /// Submits one form without waiting for its outcome.
    async fn submit(&mut self, job: Job) {
        if job.cancel.is_cancelled() || self.host_gone {
            let _ = job.reply.send(Reply::Withdrawn);
            return;
        }
        self.done_at = None;
        if self.session.is_none() {
            let snapshot = self.origin.lock().map(|o| o.clone()).unwrap_or_default();
            match open(self.bus.as_deref(), self.conn.take(), &snapshot).await {
                Ok((conn, opened)) => {
                    self.conn = Some(conn);
                    self.session = Some(opened);
                }
                Err(error) if error.broker_unreachable() => {
                    let _ = job.reply.send(Reply::Unavailable(error.to_string()));
                    return;
                }
                // The broker answered (a full disk, a limit): a refusal,
                // not a broker that cannot be reached.
                Err(error) => {
                    let _ = job.reply.send(refused(&error));
                    return;
                }
            }
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        self.counter += 1;
        let submission = format!("proxy-{}-{}", std::process::id(), self.counter);
        let submitted = session
            .submit_surviving_restart(&job.request_json, job.timeout_secs, &submission, RESTART_PATIENCE)
            .await;
        let form = match submitted {
            Ok(form) => form,
            Err(error) if error.broker_unreachable() => {
                // The daemon or the bus went away: start afresh next time.
                self.lost(&error.to_string());
                let _ = job.reply.send(Reply::Unavailable(error.to_string()));
                return;
            }
            Err(error) => {
                let _ = job.reply.send(refused(&error));
                return;
            }
        };
        let cancel = job.cancel.clone();
        let report = self.cancelled_tx.clone();
        let path = form.clone();
        let watcher = self.watchers.spawn(async move {
            cancel.cancelled().await;
            let _ = report.send(path);
        });
        self.pending.insert(
            form.to_string(),
            Pending {
                reply: job.reply,
                unseen: Some(job.unseen),
                watcher,
            },
        );
    }

    /// The asker cancelled `form`: the broker withdraws it.
    async fn withdraw(&mut self, form: &OwnedObjectPath) {
        let Some(pending) = self.pending.remove(form.as_str()) else {
            return;
        };
        if let Some(session) = &self.session
            && let Err(error) = session.close_form(form).await
        {
            tracing::debug!(%error, "closing a withdrawn form failed");
        }
        let _ = pending.reply.send(Reply::Withdrawn);
    }

    /// Nothing pending for a while: the session ends (its acknowledgements
    /// confirmed first), so that elicitd may exit idle; the connection
    /// stays for the next form.
    async fn close_session(&mut self) {
        self.done_at = None;
        if let Some(session) = self.session.take() {
            tracing::debug!("no form pending: closing the broker session");
            if let Err(error) = session.close().await {
                tracing::debug!(%error, "closing the broker session failed");
            }
        }
    }

    async fn on_host_gone(&mut self) {
        self.host_gone = true;
        self.session = None;
        // Closing the connection, not the session: elicitd then ends the
        // session as its owner's departure (`client-gone`), which is what
        // happened.
        if let Some(conn) = self.conn.take()
            && let Err(error) = conn.close().await
        {
            tracing::debug!(%error, "closing the bus connection failed");
        }
        for (_, pending) in self.pending.drain() {
            pending.watcher.abort();
            let _ = pending.reply.send(Reply::Withdrawn);
        }
    }

    /// The session broke: every form still waiting falls back.
    fn lost(&mut self, why: &str) {
        self.session = None;
        self.conn = None;
        for (_, pending) in self.pending.drain() {
            pending.watcher.abort();
            let _ = pending.reply.send(Reply::Unavailable(why.to_owned()));
        }
    }
}

/// The broker refused a form: the JSON-RPC error the server gets. A
/// storage failure says that elicitd could not store the form (the bare
/// detail, "No space left on device", would not say whose disk).
fn refused(error: &elicit_proto::Error) -> Reply {
    let detail = match error {
        elicit_proto::Error::Storage(_) => error.explained(),
        other => other.detail(),
    };
    Reply::Refused {
        code: error.jsonrpc_code(),
        detail,
    }
}

async fn next_event(session: Option<&mut ClientSession>) -> Result<FormEvent, elicit_proto::Error> {
    match session {
        Some(session) => session.wait_event().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Opens a session on `conn`, or on a new connection to `bus`.
async fn open(
    bus: Option<&str>,
    conn: Option<zbus::Connection>,
    origin: &Origin,
) -> Result<(zbus::Connection, ClientSession), elicit_proto::Error> {
    let conn = match conn {
        Some(conn) => conn,
        None => connect(bus).await?,
    };
    let session = ClientSession::open(&conn, origin).await?;
    Ok((conn, session))
}
