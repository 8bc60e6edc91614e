//! Remembered choices ("always, for this server"): where one applies, and
//! storing it once its answer has won.

use elicit_proto::{Answer, Error};

use super::Broker;

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
/// verified (when it did), and with `Remember::Directory` the directory.
#[derive(Debug)]
pub(super) struct RememberTarget {
    server: String,
    exe: Option<String>,
    cwd: Option<String>,
}

impl Broker {
    /// Where a remembered answer to form `id` would apply: its server,
    /// and with `Remember::Directory` its working directory. Checked
    /// before the answer is given, so that a choice that cannot be
    /// remembered refuses the answer instead of half-succeeding.
    pub(super) fn remember_target(&self, id: u64, scope: Remember) -> Result<RememberTarget, Error> {
        if self.policy.is_none() {
            return Err(Error::BadArgument(
                "policy is disabled, so nothing can be remembered".into(),
            ));
        }
        let origin = {
            let state = self.lock();
            let session = state
                .form(&id)
                .map(|f| f.record.session.clone())
                .unwrap_or_default();
            state
                .session(&session)
                .map(|s| s.record.origin.clone())
                .unwrap_or_default()
        };
        let server = origin.server.ok_or_else(|| {
            Error::BadArgument("this form's origin names no server to remember it for".into())
        })?;
        let cwd = match scope {
            Remember::Directory => Some(
                origin
                    .cwd
                    .ok_or_else(|| Error::BadArgument("this form's origin names no directory".into()))?,
            ),
            _ => None,
        };
        Ok(RememberTarget {
            server,
            exe: origin.verified_exe,
            cwd,
        })
    }

    /// Remembers `answer` for `target` (from [`Broker::remember_target`]).
    pub(super) async fn remember(
        &self,
        id: u64,
        answer: &Answer,
        target: RememberTarget,
    ) -> Result<(), Error> {
        let Some(rules) = &self.policy else {
            return Ok(());
        };
        let RememberTarget { server, exe, cwd } = target;
        let choice = rules
            .remember(&server, exe.as_deref(), cwd.as_deref(), answer)
            .await?;
        tracing::info!(form = id, choice, %server, "answer remembered");
        Ok(())
    }
}
