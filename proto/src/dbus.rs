//! The D-Bus surface: names, paths, the [`Origin`] dictionary, and client
//! proxies for every interface.
//!
//! The daemon implements `Broker1`, `Session1` and `Request1`; every
//! front-end implements `Frontend1`. Requests and answers travel as JSON text
//! (they are JSON in MCP, and the original text must survive untouched);
//! everything else is typed.

use std::collections::HashMap;

pub use elicit_mcp::{Origin, is_icon_name};
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

/// The daemon's well-known bus name.
pub const BUS_NAME: &str = "dev.elicitd.Broker";
/// The object path of the `Broker1` interface.
pub const BROKER_PATH: &str = "/dev/elicitd/Broker";
/// Session objects live below this path: `…/session/<id>`; a session's
/// forms below it: `…/session/<id>/form/<form-id>`.
pub const SESSION_PREFIX: &str = "/dev/elicitd/session";

/// The object path of session `session`.
pub fn session_path(session: &str) -> String {
    format!("{SESSION_PREFIX}/{session}")
}

/// The object path of form `form` in session `session`.
pub fn form_path(session: &str, form: &str) -> String {
    format!("{SESSION_PREFIX}/{session}/form/{form}")
}

/// A dictionary of options or details, `a{sv}` on the bus.
pub type Dict = HashMap<String, OwnedValue>;

/// The `a{sv}` form of an [`Origin`], with the kebab-case keys of its
/// fields; unknown keys are ignored so that clients and daemon can grow
/// apart. A trait because [`Origin`] itself lives in the serde-only
/// `elicit-mcp`, which knows nothing of D-Bus.
pub trait OriginDict {
    /// The `a{sv}` form of this origin.
    fn to_dict(&self) -> Dict;

    /// Reads an origin from an `a{sv}`; keys of the wrong type are ignored.
    fn from_dict(dict: &Dict) -> Self;
}

impl OriginDict for Origin {
    fn to_dict(&self) -> Dict {
        let mut dict = Dict::new();
        let strings = [
            ("host", &self.host),
            ("host-version", &self.host_version),
            ("server", &self.server),
            ("server-version", &self.server_version),
            ("command", &self.command),
            ("cwd", &self.cwd),
            ("hub", &self.hub),
            ("hub-cwd", &self.hub_cwd),
            ("verified-exe", &self.verified_exe),
            ("icon", &self.icon),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                dict.insert(
                    key.into(),
                    OwnedValue::from(zbus::zvariant::Str::from(value.clone())),
                );
            }
        }
        if let Some(args) = &self.verified_args {
            let array = zbus::zvariant::Array::from(args.clone());
            if let Ok(value) = OwnedValue::try_from(Value::Array(array)) {
                dict.insert("verified-args".into(), value);
            }
        }
        let numbers = [
            ("pid", self.pid),
            ("caller-pid", self.caller_pid),
            ("caller-uid", self.caller_uid),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                dict.insert(key.into(), OwnedValue::from(value));
            }
        }
        if self.remote {
            dict.insert("remote".into(), OwnedValue::from(true));
        }
        dict
    }

    fn from_dict(dict: &Dict) -> Self {
        Origin {
            host: dict_str(dict, "host"),
            host_version: dict_str(dict, "host-version"),
            server: dict_str(dict, "server"),
            server_version: dict_str(dict, "server-version"),
            command: dict_str(dict, "command"),
            cwd: dict_str(dict, "cwd"),
            hub: dict_str(dict, "hub"),
            hub_cwd: dict_str(dict, "hub-cwd"),
            verified_exe: dict_str(dict, "verified-exe"),
            verified_args: dict_strings(dict, "verified-args"),
            pid: dict_u32(dict, "pid"),
            caller_pid: dict_u32(dict, "caller-pid"),
            caller_uid: dict_u32(dict, "caller-uid"),
            remote: matches!(dict.get("remote").map(|v| &**v), Some(Value::Bool(true))),
            icon: dict_str(dict, "icon"),
        }
    }
}

/// A string entry of a dictionary.
pub fn dict_str(dict: &Dict, key: &str) -> Option<String> {
    match &**dict.get(key)? {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// An unsigned 32-bit entry of a dictionary.
pub fn dict_u32(dict: &Dict, key: &str) -> Option<u32> {
    match &**dict.get(key)? {
        Value::U32(n) => Some(*n),
        _ => None,
    }
}

/// An unsigned 64-bit entry of a dictionary.
pub fn dict_u64(dict: &Dict, key: &str) -> Option<u64> {
    match &**dict.get(key)? {
        Value::U64(n) => Some(*n),
        Value::U32(n) => Some(u64::from(*n)),
        _ => None,
    }
}

/// A string-list entry of a dictionary.
pub fn dict_strings(dict: &Dict, key: &str) -> Option<Vec<String>> {
    let value: &Value<'_> = dict.get(key)?;
    let array = match value {
        Value::Array(array) => array,
        _ => return None,
    };
    array
        .iter()
        .map(|item| match item {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

/// `dev.elicitd.Broker1`: sessions, front-ends, control and observation.
#[zbus::proxy(
    interface = "dev.elicitd.Broker1",
    default_service = "dev.elicitd.Broker",
    default_path = "/dev/elicitd/Broker"
)]
pub trait Broker1 {
    /// Opens a session for the caller; returns its path and a resume token.
    fn open_session(&self, origin: Dict) -> zbus::Result<(OwnedObjectPath, String)>;

    /// Re-attaches the caller to the session of `resume_token` (after a
    /// daemon restart, or from a new connection).
    fn resume_session(&self, resume_token: &str) -> zbus::Result<OwnedObjectPath>;

    /// Proves the broker knows `session`'s resume token: an HMAC over
    /// `nonce` (see [`crate::trust`]), and a challenge for `ResumeProven`.
    fn prove_session(&self, session: &str, nonce: &[u8]) -> zbus::Result<(Vec<u8>, Vec<u8>)>;

    /// Re-attaches the caller to `session` with its proof over the
    /// challenge of its last `ProveSession`.
    fn resume_proven(&self, session: &str, proof: &[u8]) -> zbus::Result<OwnedObjectPath>;

    /// Registers like `RegisterFrontend` and returns a registration id and
    /// its secret, which the broker proves it knows after a restart.
    fn open_frontend(
        &self,
        path: &zbus::zvariant::ObjectPath<'_>,
        options: Dict,
    ) -> zbus::Result<(String, String)>;

    /// Proves the broker knows the secret of front-end registration
    /// `registration`: an HMAC over `nonce`.
    fn prove_frontend(&self, registration: &str, nonce: &[u8]) -> zbus::Result<Vec<u8>>;

    /// Registers again under `registration` (after checking the proof).
    fn resume_frontend(
        &self,
        path: &zbus::zvariant::ObjectPath<'_>,
        options: Dict,
        registration: &str,
    ) -> zbus::Result<()>;

    /// Sends `FormChanged` to the caller from now on, until it leaves the
    /// bus; the signal goes to watchers alone, never to the whole bus.
    fn watch(&self) -> zbus::Result<()>;

    /// Registers the caller as a front-end served at `path`. Options:
    /// `name` (s), `capabilities` (as: form, url, confirm), `priority` (i).
    fn register_frontend(&self, path: &zbus::zvariant::ObjectPath<'_>, options: Dict) -> zbus::Result<()>;

    /// Withdraws the caller's front-end registration.
    fn unregister_frontend(&self) -> zbus::Result<()>;

    /// Pending forms as a JSON array (no contents of answers, ever);
    /// refused when the list is over 16 MiB: [`list_all_forms`] pages.
    fn list_forms(&self) -> zbus::Result<String>;

    /// One page of pending forms: those with ids above `after` (0 for the
    /// first page), in id order, up to about 1 MiB of JSON, and whether
    /// more follow. `brief` leaves out messages and field names.
    fn list_forms_page(&self, after: u64, brief: bool) -> zbus::Result<(String, bool)>;

    /// Takes a form over from whichever front-end shows it, for a control
    /// client; returns the presentation token, the request JSON and details.
    fn claim(&self, form: &str) -> zbus::Result<(String, String, Dict)>;

    /// Answers a presented form with its token.
    fn answer(&self, form: &str, token: &str, action: &str, content_json: &str) -> zbus::Result<()>;

    /// Answers like `Answer`, with options: `remember` (s: `server` or
    /// `directory`) gives the same answer to that server's later forms.
    fn answer_with(
        &self,
        form: &str,
        token: &str,
        action: &str,
        content_json: &str,
        options: Dict,
    ) -> zbus::Result<()>;

    /// Hands a form presented to the caller (with its token) to the
    /// next-best front-end other than the caller, or to a started
    /// front-end program; it does not come back to the caller.
    fn pass_on(&self, form: &str, token: &str) -> zbus::Result<()>;

    /// Remembered choices as a JSON array.
    fn list_remembered(&self) -> zbus::Result<String>;

    /// Forgets a remembered choice; false if there was none.
    fn forget(&self, id: u64) -> zbus::Result<bool>;

    /// The newest `limit` history records as a JSON array.
    fn history(&self, limit: u32) -> zbus::Result<String>;

    /// A form changed state: for observers; carries no contents.
    #[zbus(signal)]
    fn form_changed(&self, form: &str, session: &str, state: &str, reason: &str) -> zbus::Result<()>;

    /// The daemon's version.
    #[zbus(property)]
    fn version(&self) -> zbus::Result<String>;

    /// Forms queued or presented.
    #[zbus(property)]
    fn pending(&self) -> zbus::Result<u32>;

    /// Open sessions.
    #[zbus(property)]
    fn sessions(&self) -> zbus::Result<u32>;

    /// Registered front-ends.
    #[zbus(property)]
    fn frontends(&self) -> zbus::Result<u32>;
}

/// `dev.elicitd.Session1`: one client's stream of forms.
#[zbus::proxy(interface = "dev.elicitd.Session1", default_service = "dev.elicitd.Broker")]
pub trait Session1 {
    /// Queues a form (`elicitation/create` params as JSON) and returns its
    /// request object at once. Options: `timeout` (u32 seconds),
    /// `submission-id` (s: the same id returns the same request, so a
    /// client may retry after a daemon restart without a duplicate).
    fn elicit(&self, request_json: &str, options: Dict) -> zbus::Result<OwnedObjectPath>;

    /// Emits `Response` again for every answered, undelivered form.
    fn redeliver(&self) -> zbus::Result<()>;

    /// Closes the session and cancels its forms.
    fn close(&self) -> zbus::Result<()>;
}

/// `dev.elicitd.Request1`: one form, from the owner's side.
#[zbus::proxy(interface = "dev.elicitd.Request1", default_service = "dev.elicitd.Broker")]
pub trait Request1 {
    /// The form's outcome, sent to the session owner alone. Details:
    /// `reason` (s), `answered-by` (s).
    #[zbus(signal)]
    fn response(&self, action: &str, content_json: &str, details: Dict) -> zbus::Result<()>;

    /// No front-end shows the form and none could be started for it;
    /// `why` says why. Sent to the session owner alone, once while the
    /// form waits so, so that it can tell its user where to answer.
    #[zbus(signal)]
    fn unseen(&self, why: &str) -> zbus::Result<()>;

    /// The owner has the answer; the daemon forgets its content.
    fn acknowledge(&self) -> zbus::Result<()>;

    /// Withdraws the form (the server cancelled it).
    fn close(&self) -> zbus::Result<()>;
}

/// `dev.elicitd.Frontend1`: implemented by every front-end.
#[zbus::proxy(interface = "dev.elicitd.Frontend1")]
pub trait Frontend1 {
    /// Show a form. `info` carries the origin's keys plus `session` (s),
    /// `queued-at-ms` (t) and `deadline-ms` (t, 0 for none). Must return at
    /// once; the answer comes later through `Broker1.Answer`.
    fn show(&self, form: &str, token: &str, request_json: &str, info: Dict) -> zbus::Result<()>;

    /// Stop showing a form; `reason` says why (answered, cancelled,
    /// client-gone, timeout, claimed, closed).
    fn withdraw(&self, form: &str, reason: &str) -> zbus::Result<()>;
}

/// Refuses a call to a front-end's `Frontend1` object unless it comes from
/// the current owner of [`BUS_NAME`]: any client on the bus could call that
/// object, and a forged form is a phishing tool.
pub async fn check_from_broker(
    conn: &zbus::Connection,
    header: &zbus::message::Header<'_>,
) -> zbus::fdo::Result<()> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await?;
    let name = zbus::names::BusName::try_from(BUS_NAME).map_err(zbus::Error::from)?;
    let owner = dbus.get_name_owner(name).await?;
    match header.sender() {
        Some(sender) if sender.as_str() == owner.as_str() => Ok(()),
        _ => Err(zbus::fdo::Error::AccessDenied(
            "only elicitd may call this".into(),
        )),
    }
}

/// Every pending form, page by page (`ListFormsPage`): each page's JSON
/// array is handed to `each` as the broker sent it, so that no reply comes
/// near the bus's message limit and no caller need hold the whole list,
/// whatever is queued. `brief` leaves out messages and field names.
pub async fn list_all_forms(
    broker: &Broker1Proxy<'_>,
    brief: bool,
    mut each: impl FnMut(&str),
) -> Result<(), crate::Error> {
    /// Only the id of an entry is read here.
    #[derive(serde::Deserialize)]
    struct Entry {
        id: u64,
    }
    let mut after = 0;
    loop {
        let (json, more) = broker.list_forms_page(after, brief).await?;
        let page: Vec<Entry> = serde_json::from_str(&json).map_err(|e| {
            crate::Error::BadArgument(format!("ListFormsPage returned no list of forms: {e}"))
        })?;
        each(&json);
        match page.last() {
            // Ids only grow: the next page starts past this one.
            Some(last) if more && last.id > after => after = last.id,
            _ => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_survives_the_bus_with_what_the_proxy_verified() {
        let origin = Origin {
            host: Some("host".into()),
            server: Some("deployer".into()),
            command: Some("deployer --stdio".into()),
            cwd: Some("/src".into()),
            verified_exe: Some("/usr/local/bin/deployer".into()),
            verified_args: Some(vec!["--stdio".into(), "two words".into()]),
            pid: Some(7),
            ..Origin::default()
        };
        assert_eq!(Origin::from_dict(&origin.to_dict()), origin);
        let hub = Origin {
            hub: Some("cline".into()),
            hub_cwd: Some("/home/me/first".into()),
            ..origin
        };
        assert_eq!(Origin::from_dict(&hub.to_dict()), hub);
        assert_eq!(Origin::from_dict(&Origin::default().to_dict()), Origin::default());
    }
}
