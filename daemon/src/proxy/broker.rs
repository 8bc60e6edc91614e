//! The proxy's one broker session, owned by one task.
//!
//! `ClientSession::wait` needs the session exclusively, so a single actor
//! owns it and takes forms one at a time, in the order they were asked.
//! That matches what the user sees anyway: the broker presents at most one
//! form per session. The session is opened lazily, at the first form, so
//! that its origin already names the host and the server, and so that a
//! proxy whose server never elicits never starts (or activates) elicitd.

use std::sync::{Arc, Mutex};

use elicit_proto::dbus::Origin;
use tokio::sync::{mpsc, oneshot};

use super::cancel::Cancel;
use crate::client::{ClientSession, Outcome, connect};

/// What became of one form.
#[derive(Debug)]
pub enum Reply {
    /// The broker's answer (including cancel on timeout or withdrawal).
    Answered(Outcome),
    /// The broker refused the request (a limit, a policy error); the text
    /// says why.
    Refused(elicit_proto::Error),
    /// elicitd could not be reached: the caller falls back.
    Unavailable(String),
    /// The asker cancelled before an answer came.
    Withdrawn,
}

struct Job {
    request_json: String,
    cancel: Cancel,
    reply: oneshot::Sender<Reply>,
}

/// A handle to the broker actor; cheap to clone.
#[derive(Debug, Clone)]
pub struct Broker {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Broker {
    /// Starts the actor. `origin` is read when the session opens.
    pub fn start(bus: Option<String>, origin: Arc<Mutex<Origin>>) -> (Broker, tokio::task::JoinHandle<()>) {
        let (jobs, receiver) = mpsc::unbounded_channel();
        let task = tokio::spawn(actor(bus, origin, receiver));
        (Broker { jobs }, task)
    }

    /// Asks the user `request_json` (`elicitation/create` params) and
    /// waits for the outcome; `cancel` withdraws the form.
    pub async fn ask(&self, request_json: String, cancel: Cancel) -> Reply {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            request_json,
            cancel,
            reply,
        };
        if self.jobs.send(job).is_err() {
            return Reply::Unavailable("the broker task has stopped".into());
        }
        answer
            .await
            .unwrap_or_else(|_| Reply::Unavailable("the broker task has stopped".into()))
    }
}

/// How long a submission waits for a broker that died before replying to
/// come back, before the elicitation gets the no-broker fallback.
const RESTART_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

async fn actor(bus: Option<String>, origin: Arc<Mutex<Origin>>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut session: Option<ClientSession> = None;
    // The connection must outlive the session that uses it.
    let mut _conn: Option<zbus::Connection> = None;
    let mut counter = 0u64;
    while let Some(job) = jobs.recv().await {
        if job.cancel.is_cancelled() {
            let _ = job.reply.send(Reply::Withdrawn);
            continue;
        }
        if session.is_none() {
            let snapshot = origin.lock().map(|o| o.clone()).unwrap_or_default();
            match open(bus.as_deref(), &snapshot).await {
                Ok((conn, opened)) => {
                    _conn = Some(conn);
                    session = Some(opened);
                }
                Err(error) => {
                    let _ = job.reply.send(Reply::Unavailable(error.to_string()));
                    continue;
                }
            }
        }
        let Some(current) = session.as_mut() else {
            continue;
        };
        counter += 1;
        let submission = format!("proxy-{}-{counter}", std::process::id());
        let submitted = current
            .submit_surviving_restart(&job.request_json, None, &submission, RESTART_PATIENCE)
            .await;
        let form = match submitted {
            Ok(form) => form,
            Err(error @ elicit_proto::Error::Bus(_)) => {
                // The daemon or the bus went away: start afresh next time.
                session = None;
                let _ = job.reply.send(Reply::Unavailable(error.to_string()));
                continue;
            }
            Err(error) => {
                let _ = job.reply.send(Reply::Refused(error));
                continue;
            }
        };
        let reply = tokio::select! {
            outcome = current.wait(&form) => match outcome {
                Ok(outcome) => Reply::Answered(outcome),
                Err(error) => {
                    session = None;
                    Reply::Unavailable(error.to_string())
                }
            },
            () = job.cancel.cancelled() => {
                if let Err(error) = current.close_form(&form).await {
                    tracing::debug!(%error, "closing a withdrawn form failed");
                }
                Reply::Withdrawn
            }
        };
        let _ = job.reply.send(reply);
    }
    // Every handle is gone: the proxy is shutting down.
    if let Some(session) = session
        && let Err(error) = session.close().await
    {
        tracing::debug!(%error, "closing the broker session failed");
    }
}

async fn open(
    bus: Option<&str>,
    origin: &Origin,
) -> Result<(zbus::Connection, ClientSession), elicit_proto::Error> {
    let conn = connect(bus).await?;
    let session = ClientSession::open(&conn, origin).await?;
    Ok((conn, session))
}
