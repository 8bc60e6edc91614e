//! Remembered choices: "always, for this server" (optionally "in this
//! directory"), kept as data in a sled tree the daemon owns.

use std::time::{SystemTime, UNIX_EPOCH};

use elicit_proto::dbus::Origin;
use serde::{Deserialize, Serialize};

use crate::error::PolicyError;
use crate::helpers::is_within;
use crate::verdict::Verdict;

/// The key that holds the last id handed out; choices live under
/// [`CHOICE_PREFIX`].
const NEXT_ID_KEY: &[u8] = b"next-id";
const CHOICE_PREFIX: &[u8] = b"choice/";

/// One remembered choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RememberedChoice {
    /// Its id, for `elicit policy forget ID`.
    pub id: u64,
    /// The server it applies to, as its origin names it.
    pub server: String,
    /// When set, it applies only to origins whose executable the proxy
    /// verified to be this one: a server that merely calls itself
    /// `server` does not get it.
    #[serde(default)]
    pub exe: Option<String>,
    /// When set, it applies only to clients working in this directory or
    /// below it.
    pub cwd: Option<String>,
    /// What to answer.
    pub verdict: Verdict,
    /// When it was remembered, in milliseconds since the Unix epoch.
    pub created_ms: u64,
}

impl RememberedChoice {
    /// A sentence for history and listings.
    pub fn describe(&self) -> String {
        let server = match &self.exe {
            Some(exe) => format!("{} ({exe})", self.server),
            None => self.server.clone(),
        };
        match &self.cwd {
            Some(cwd) => format!("always {} for {server} in {cwd}", self.verdict.name()),
            None => format!("always {} for {server}", self.verdict.name()),
        }
    }

    fn applies_to(&self, origin: &Origin) -> bool {
        let server = origin.server.as_deref() == Some(self.server.as_str());
        let exe = self.exe.is_none() || self.exe == origin.verified_exe;
        let place = match (&self.cwd, &origin.cwd) {
            (None, _) => true,
            (Some(dir), Some(cwd)) => is_within(cwd, dir),
            (Some(_), None) => false,
        };
        server && exe && place
    }
}

/// The store of remembered choices, over a tree the daemon opens.
#[derive(Debug, Clone)]
pub struct Remembered {
    tree: sled::Tree,
}

impl Remembered {
    /// Uses `tree` (which should hold nothing else) as the store.
    pub fn new(tree: sled::Tree) -> Self {
        Remembered { tree }
    }

    /// Remembers `verdict` for `server`, in `cwd` and below when given;
    /// returns the new choice's id.
    pub fn remember(&self, server: &str, cwd: Option<&str>, verdict: Verdict) -> Result<u64, PolicyError> {
        self.remember_for(server, None, cwd, verdict)
    }

    /// As [`Remembered::remember`], bound also to the executable the proxy
    /// verified (`origin.verified_exe`) when `exe` is given, so that
    /// another server naming itself `server` does not get the choice.
    pub fn remember_for(
        &self,
        server: &str,
        exe: Option<&str>,
        cwd: Option<&str>,
        verdict: Verdict,
    ) -> Result<u64, PolicyError> {
        let id = self.next_id()?;
        let created_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let choice = RememberedChoice {
            id,
            server: server.to_owned(),
            exe: exe.map(str::to_owned),
            cwd: cwd.map(str::to_owned),
            verdict,
            created_ms,
        };
        let bytes = serde_json::to_vec(&choice).map_err(|source| PolicyError::Record { id, source })?;
        self.tree.insert(key(id), bytes)?;
        self.tree.flush()?;
        Ok(id)
    }

    /// Every remembered choice, oldest first.
    pub fn list(&self) -> Result<Vec<RememberedChoice>, PolicyError> {
        self.tree
            .scan_prefix(CHOICE_PREFIX)
            .map(|entry| {
                let (key, value) = entry?;
                let id = id_of(&key);
                serde_json::from_slice(&value).map_err(|source| PolicyError::Record { id, source })
            })
            .collect()
    }

    /// Forgets choice `id`; returns whether it existed.
    pub fn forget(&self, id: u64) -> Result<bool, PolicyError> {
        let existed = self.tree.remove(key(id))?.is_some();
        self.tree.flush()?;
        Ok(existed)
    }

    /// The choice that applies to `origin`: one bound to the deepest
    /// directory containing its working directory beats one for the whole
    /// server, and among equals the newest wins.
    pub fn lookup(&self, origin: &Origin) -> Result<Option<RememberedChoice>, PolicyError> {
        if origin.server.is_none() {
            return Ok(None);
        }
        Ok(best_choice(&self.list()?, origin).cloned())
    }

    fn next_id(&self) -> Result<u64, PolicyError> {
        let updated = self.tree.update_and_fetch(NEXT_ID_KEY, |old| {
            let last = old.map_or(0, id_of_raw);
            Some((last + 1).to_be_bytes().to_vec())
        })?;
        Ok(updated.map_or(1, |bytes| id_of_raw(&bytes)))
    }
}

fn key(id: u64) -> Vec<u8> {
    [CHOICE_PREFIX, &id.to_be_bytes()].concat()
}

fn id_of(key: &[u8]) -> u64 {
    id_of_raw(key.strip_prefix(CHOICE_PREFIX).unwrap_or(key))
}

fn id_of_raw(bytes: &[u8]) -> u64 {
    bytes.try_into().map_or(0, u64::from_be_bytes)
}

/// Among `choices`, the one that applies to `origin`: one bound to the
/// deepest directory containing its working directory beats one for the
/// whole server, and among equals the newest wins.
pub(crate) fn best_choice<'a>(
    choices: &'a [RememberedChoice],
    origin: &Origin,
) -> Option<&'a RememberedChoice> {
    // A choice is for a server: an origin that names none gets none.
    origin.server.as_ref()?;
    choices
        .iter()
        .filter(|choice| choice.applies_to(origin))
        .max_by_key(|choice| {
            let depth = choice.cwd.as_ref().map_or(0, |dir| dir.len() + 1);
            (depth, choice.exe.is_some(), choice.id)
        })
}
