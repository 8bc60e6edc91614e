//! What goes into the core and what comes out of it: plain data.

use std::collections::HashSet;
use std::sync::Arc;

use elicit_proto::dbus::Origin;
use elicit_proto::{Answer, Elicitation, Error};
use serde::{Deserialize, Serialize};

use super::state::{Capabilities, Show, ShowInfo};
use crate::rules::PolicyVerdict;
use crate::store::{FormRecord, HistoryRecord, RequestText, SessionRecord};

/// A call's number, given by the driver: its reply carries it back.
pub type CallId = u64;

/// A batch's number, given by the core: its completion carries it back.
pub type BatchId = u64;

/// Who called: verified by the bus daemon, never taken from the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// What a submitter may ask for beside the request.
#[derive(Debug, Clone, Default)]
pub struct ElicitOptions {
    /// Seconds until the form is cancelled with reason `timeout`.
    pub timeout_secs: Option<u64>,
    /// An idempotency key: a retry with the same key gets the same form.
    pub submission_id: Option<String>,
}

/// Whether an answer should also be given to later forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remember {
    /// Just this once.
    No,
    /// Always, for this server.
    Server,
    /// Always, for this server in this working directory.
    Directory,
}

impl Remember {
    /// Reads the `remember` option: absent, `server` or `directory`.
    pub fn parse(option: Option<&str>) -> Result<Remember, Error> {
        match option {
            None | Some("") => Ok(Remember::No),
            Some("server") => Ok(Remember::Server),
            Some("directory") => Ok(Remember::Directory),
            Some(other) => Err(Error::BadArgument(format!(
                "option `remember` must be \"server\" or \"directory\", not {other:?}"
            ))),
        }
    }
}

/// Where a remembered choice applies: the server, the executable the proxy
/// verified (when it did), and with [`Remember::Directory`] the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberTarget {
    /// The server's name.
    pub server: String,
    /// The executable the proxy verified.
    pub exe: Option<String>,
    /// The working directory, for [`Remember::Directory`].
    pub cwd: Option<String>,
}

/// A front-end as it registers: where it serves `Frontend1`, its name,
/// what it renders and its rank.
#[derive(Debug, Clone)]
pub struct FrontendSpec {
    /// The object path of its `Frontend1`.
    pub path: String,
    /// Its name (`gtk`, `tui`, …); the caller's bus name when it gave none.
    pub name: Option<String>,
    /// What it can render.
    pub capabilities: Capabilities,
    /// Higher comes first among front-ends the preference list does not rank.
    pub priority: i32,
}

/// A D-Bus call, with its arguments read and checked for form.
#[derive(Debug)]
pub enum Call {
    /// `OpenSession`.
    OpenSession(Origin),
    /// `ResumeSession`.
    ResumeSession(String),
    /// `ProveSession`.
    ProveSession {
        /// The session.
        session: String,
        /// The caller's nonce.
        nonce: Vec<u8>,
    },
    /// `ResumeProven`.
    ResumeProven {
        /// The session.
        session: String,
        /// The caller's answer to the challenge.
        proof: Vec<u8>,
    },
    /// Before `Elicit` parses anything: whether the caller owns the session
    /// and a form of `bytes` would be admitted (count, per-session and
    /// byte limits), so that a refusal costs no parsing. Replies with the
    /// session's origin, for the rules to decide the submission before it
    /// reaches the core (they may take seconds). `Elicit` checks again.
    Admissible {
        /// The session.
        session: String,
        /// Bytes of the request's text.
        bytes: usize,
        /// The submission id: a retry of a stored form is not refused.
        submission_id: Option<String>,
    },
    /// `Elicit`: the request parsed, and what the rules decided.
    Elicit {
        /// The session.
        session: String,
        /// The checked request, without its JSON tree.
        request: Arc<Elicitation>,
        /// The request's text, as front-ends receive it.
        text: RequestText,
        /// Timeout and submission id.
        options: ElicitOptions,
        /// The rules' decision, if they spared the human.
        verdict: Option<PolicyVerdict>,
    },
    /// `Redeliver`.
    Redeliver(String),
    /// `Session1.Close`.
    CloseSession(String),
    /// `Request1.Acknowledge`.
    Acknowledge(u64),
    /// `Request1.Close`.
    CloseForm(u64),
    /// `RegisterFrontend`.
    RegisterFrontend(FrontendSpec),
    /// `OpenFrontend`.
    OpenFrontend(FrontendSpec),
    /// `ProveFrontend`.
    ProveFrontend {
        /// The registration.
        registration: String,
        /// The caller's nonce.
        nonce: Vec<u8>,
    },
    /// `ResumeFrontend`.
    ResumeFrontend {
        /// The front-end.
        spec: FrontendSpec,
        /// The registration.
        registration: String,
    },
    /// `UnregisterFrontend`.
    UnregisterFrontend,
    /// `Watch`.
    Watch,
    /// `ListForms`.
    ListForms,
    /// `ListFormsPage`.
    ListFormsPage {
        /// List the forms after this id; `None` from the first.
        after: Option<u64>,
        /// Leave out messages and field names.
        brief: bool,
    },
    /// `Claim`.
    Claim(u64),
    /// `Answer` and `AnswerWith`.
    Answer {
        /// The form.
        form: u64,
        /// The presentation's token.
        token: String,
        /// `accept`, `decline` or `cancel`.
        action: String,
        /// The content, as JSON text.
        content: String,
        /// Whether to remember it.
        remember: Remember,
    },
    /// `PassOn`.
    PassOn {
        /// The form.
        form: u64,
        /// The presentation's token.
        token: String,
    },
    /// The counts of the `Pending`, `Sessions` and `Frontends` properties.
    Counts,
}

/// Something that happened, for the core to act on.
// One input at a time is moved into the core and consumed: a call's size
// costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Input {
    /// A D-Bus call from a verified caller.
    Call {
        /// Its number, for the reply.
        id: CallId,
        /// Who called.
        caller: Caller,
        /// What it asks.
        call: Call,
    },
    /// A batch is durable.
    Stored(BatchId),
    /// A batch failed: none of it is stored.
    Failed {
        /// The batch.
        batch: BatchId,
        /// Why, as the storage said it.
        error: String,
    },
    /// A `Show` call failed (an error reply: the front-end refused it or
    /// is broken).
    ShowFailed {
        /// The form.
        form: u64,
        /// The front-end it went to.
        bus_name: String,
    },
    /// A `Show` call got no reply within `show-timeout-ms`: the front-end
    /// may only be paused.
    ShowUnanswered {
        /// The form.
        form: u64,
        /// The front-end it went to.
        bus_name: String,
    },
    /// A front-end set aside replied to the `Withdraw` of a form taken
    /// back from it ([`Effect::Recall`]): it runs again.
    FrontendAnswered(String),
    /// A unique name left the bus.
    NameLost(String),
    /// The time [`super::Core::next_timeout`] named has come (or any
    /// later time: the core looks at `now`).
    Timer,
    /// The wait for returning front-ends at start-up is over, and a
    /// program was wanted meanwhile: present again.
    DispatchAll,
    /// The name was given up for an idle exit; `busy` when a call that
    /// may open a session was in progress meanwhile.
    NameReleased {
        /// A call was in progress.
        busy: bool,
    },
}

/// A successful reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Nothing to return.
    Done,
    /// A new session: its path and resume token.
    Session {
        /// Its object path.
        path: String,
        /// Its resume token.
        token: String,
    },
    /// An object path.
    Path(String),
    /// A proof and a challenge (`ProveSession`).
    Challenge {
        /// The broker's proof.
        proof: Vec<u8>,
        /// The nonce the caller must prove over.
        challenge: Vec<u8>,
    },
    /// A proof (`ProveFrontend`).
    Proof(Vec<u8>),
    /// JSON text.
    Json(String),
    /// One page of `ListFormsPage`.
    Page(super::listing::Page),
    /// A claimed form: its token, request and info.
    Claimed {
        /// The presentation's token.
        token: String,
        /// The request's text.
        request: Arc<str>,
        /// What goes with it.
        info: ShowInfo,
    },
    /// A session's origin.
    Origin(Origin),
    /// A front-end registration.
    Registration {
        /// Its id.
        id: String,
        /// Its secret.
        secret: String,
    },
    /// Pending forms, sessions and front-ends.
    Counts(usize, usize, usize),
    /// An answer was given and should be remembered for `target`.
    Remember {
        /// Where it applies.
        target: RememberTarget,
        /// The answer given.
        answer: Answer,
    },
}

/// A front-end registration as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// What the broker proves it knows.
    pub secret: String,
    /// The connection that holds it.
    pub bus_name: String,
    /// When it was issued, in milliseconds since the epoch.
    pub created_ms: u64,
}

/// One durable change.
#[derive(Debug, Clone)]
pub enum Write {
    /// Writes a session.
    PutSession(SessionRecord),
    /// Deletes a session.
    RemoveSession(String),
    /// Writes a form (its answer's content to a file of its own).
    PutForm(FormRecord),
    /// Deletes a form and erases its answer's content.
    RemoveForm(u64),
    /// Erases a form's answer content file, if there is one.
    EraseAnswer(u64),
    /// Adds a history record.
    History(HistoryRecord),
    /// Writes a front-end registration.
    PutRegistration(String, Registration),
    /// Deletes a front-end registration.
    RemoveRegistration(String),
}

/// A D-Bus object the driver exports or removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    /// `Session1` of a session.
    Session(String),
    /// `Request1` of a form (session, form).
    Form(String, u64),
}

/// `Response`, for one session's owner alone.
#[derive(Debug)]
pub struct ResponseSignal {
    /// The owner's unique name.
    pub owner: String,
    /// The session.
    pub session: String,
    /// The form.
    pub form: u64,
    /// The outcome.
    pub answer: Answer,
    /// Why.
    pub reason: String,
    /// Who decided.
    pub answered_by: String,
}

/// `FormChanged`, for each watcher alone (a broadcast would reach every
/// connection the bus admits).
#[derive(Debug)]
pub struct FormChangedSignal {
    /// The watchers.
    pub to: Vec<String>,
    /// The form.
    pub form: u64,
    /// Its session.
    pub session: String,
    /// Its new state.
    pub state: &'static str,
    /// Why, or who.
    pub reason: String,
}

/// What the driver must do, in order.
#[derive(Debug)]
pub enum Effect {
    /// Store `writes` together, with the id counter at `next_id`; report
    /// [`Input::Stored`] or [`Input::Failed`] unless `lazy` (a write whose
    /// loss in a crash only repeats something harmless, flushed with the
    /// next group).
    Write {
        /// The batch.
        batch: BatchId,
        /// Its writes, in order.
        writes: Vec<Write>,
        /// Ids below this are taken.
        next_id: u64,
        /// Nobody waits for it.
        lazy: bool,
    },
    /// Replies to call `call`.
    Reply {
        /// The call.
        call: CallId,
        /// The reply.
        result: Result<Reply, Error>,
    },
    /// Calls `Show` on a front-end; report [`Input::ShowFailed`] on an
    /// error, [`Input::ShowUnanswered`] when no reply comes in time.
    Show(Show),
    /// Calls `Withdraw` on a front-end.
    Withdraw {
        /// The front-end's unique name.
        bus_name: String,
        /// Its `Frontend1` path.
        path: String,
        /// The form's session: calls about one session reach a front-end
        /// in order.
        session: String,
        /// The form.
        form: u64,
        /// Why.
        reason: String,
    },
    /// Calls `Withdraw` (reason `unanswered`) on a front-end that left a
    /// `Show` unanswered, for a form now given elsewhere; reports
    /// [`Input::FrontendAnswered`] when it replies, however late.
    Recall {
        /// The front-end's unique name.
        bus_name: String,
        /// Its `Frontend1` path.
        path: String,
        /// The form's session: the call goes out after that session's
        /// `Show`, and so reaches the front-end after it.
        session: String,
        /// The form.
        form: u64,
    },
    /// Emits `Response` to the session's owner alone.
    Response(ResponseSignal),
    /// Emits `FormChanged` to each watcher alone.
    FormChanged(FormChangedSignal),
    /// Starts a front-end program not named in `unwanted`, unless one runs.
    Launch(HashSet<String>),
    /// A front-end registered (the launcher stops waiting for it).
    Registered(String),
    /// At start-up: front-ends that were registered and are still on the
    /// bus; no program starts until they register again or a while passed.
    AwaitReturning(HashSet<String>),
    /// Exports an object.
    Export(Object),
    /// Removes an object.
    Unexport(Object),
    /// Gives up the bus name for an idle exit, then reports
    /// [`Input::NameReleased`].
    ReleaseName,
    /// Takes the bus name back: a call came in while it was given up.
    RequestName,
    /// Stops the daemon: idle, with its name given up.
    Exit,
}
