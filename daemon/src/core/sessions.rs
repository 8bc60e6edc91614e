//! Sessions: opening, resuming, closing, and losing their owner.

use elicit_proto::Error;
use elicit_proto::dbus::{Origin, session_path};

use super::pending::Pending;
use super::{CallId, Caller, Core, Object, Reply, Write};
use crate::store::SessionRecord;

impl Core {
    /// `OpenSession`: stored first, then the path and token go back.
    pub(super) fn open_session(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        mut origin: Origin,
    ) -> Result<Option<Reply>, Error> {
        self.idle.touch(now);
        // What the bus verified replaces whatever the client claimed there.
        origin.caller_pid = caller.pid;
        origin.caller_uid = Some(caller.uid);
        self.check_uid_limit(caller)?;
        self.check_session_limit(caller)?;
        let record = SessionRecord {
            id: self.take_id().to_string(),
            owner: caller.name.clone(),
            resume_token: self.secret(),
            origin,
            opened_ms: now,
        };
        let writes = vec![Write::PutSession(record.clone())];
        self.write(writes, Some(Pending::Open { call, record }));
        Ok(None)
    }

    pub(super) fn session_opened(&mut self, now: u64, call: CallId, record: SessionRecord) {
        self.idle.touch(now);
        let path = session_path(&record.id);
        let token = record.resume_token.clone();
        tracing::info!(session = %record.id, owner = %record.owner, origin = %record.origin.describe(), "session opened");
        self.effects
            .push(super::Effect::Export(Object::Session(record.id.clone())));
        self.state.open_session(record);
        self.reply(call, Ok(Reply::Session { path, token }));
    }

    /// Refuses a new session beyond `broker.sessions-per-uid`, across all
    /// connections, counting those being opened: every caller runs as the
    /// broker's uid, so a client opening more connections gains nothing. A
    /// resumed session exists already and is not counted again.
    fn check_uid_limit(&self, caller: &Caller) -> Result<(), Error> {
        let per_uid = self.config.broker.sessions_per_uid;
        let opening = self
            .pending
            .values()
            .filter(|p| matches!(p, Pending::Open { .. }))
            .count();
        if self.state.sessions().count() + opening >= per_uid {
            return Err(Error::LimitExceeded(format!(
                "uid {} already has {per_uid} sessions open (broker.sessions-per-uid)",
                caller.uid
            )));
        }
        Ok(())
    }

    /// Refuses `caller` one more session beyond
    /// `broker.sessions-per-connection`, counting those being opened.
    fn check_session_limit(&self, caller: &Caller) -> Result<(), Error> {
        let limit = self.config.broker.sessions_per_connection;
        let opening = self
            .pending
            .values()
            .filter(|p| matches!(p, Pending::Open { record, .. } if record.owner == caller.name))
            .count();
        if self.state.sessions_of(&caller.name).count() + opening >= limit {
            return Err(Error::LimitExceeded(format!(
                "this connection already has {limit} sessions open (broker.sessions-per-connection)"
            )));
        }
        Ok(())
    }

    /// `ResumeSession`: re-attaches `caller` to the session of `token`.
    pub(super) fn resume_session(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        token: &str,
    ) -> Result<Option<Reply>, Error> {
        self.idle.touch(now);
        let id = self
            .state
            .sessions()
            .find(|s| s.record.resume_token == token)
            .map(|s| s.record.id.clone())
            .ok_or_else(|| Error::NotFound("no session has this resume token".into()))?;
        self.take_over(call, caller, &id)
    }

    /// Makes `caller` the owner of session `id`, within the
    /// sessions-per-connection limit (a session it owns already does not
    /// count twice). The new owner shows once it is stored.
    pub(super) fn take_over(
        &mut self,
        call: CallId,
        caller: &Caller,
        id: &str,
    ) -> Result<Option<Reply>, Error> {
        let session = self
            .state
            .session(id)
            .ok_or_else(|| Error::NotFound(format!("no session {id}")))?;
        if session.ending {
            // Its removal is being stored: a new owner written after it
            // would bring it back from the dead (found by the simulation).
            return Err(Error::NotFound(format!("session {id} is ending")));
        }
        let mut record = session.record.clone();
        if record.owner != caller.name {
            self.check_session_limit(caller)?;
        }
        record.owner = caller.name.clone();
        let writes = vec![Write::PutSession(record)];
        let then = Pending::TakeOver {
            call,
            session: id.to_owned(),
            owner: caller.name.clone(),
        };
        self.write(writes, Some(then));
        Ok(None)
    }

    pub(super) fn taken_over(&mut self, now: u64, call: CallId, session: &str, owner: &str) {
        self.idle.touch(now);
        if self.state.session(session).is_none() {
            self.reply(call, Err(Error::NotFound(format!("no session {session}"))));
            return;
        }
        self.state.set_owner(session, owner);
        tracing::info!(%session, %owner, "session resumed");
        self.reply(call, Ok(Reply::Path(session_path(session))));
    }

    /// Checks that `caller` owns `session`; returns its origin.
    pub(super) fn owned_session(&self, caller: &Caller, session: &str) -> Result<Origin, Error> {
        match self.state.session(session) {
            Some(s) if s.record.owner == caller.name => Ok(s.record.origin.clone()),
            Some(_) => Err(Error::AccessDenied(format!(
                "session {session} belongs to another client"
            ))),
            None => Err(Error::NotFound(format!("no session {session}"))),
        }
    }

    /// `Session1.Close`: its forms are cancelled and it is forgotten.
    pub(super) fn close_session(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        session: &str,
    ) -> Result<Option<Reply>, Error> {
        self.owned_session(caller, session)?;
        self.end_session(now, Some(call), session, "closed");
        Ok(None)
    }

    /// Ends `session`: every form of it is cancelled with `reason`, in one
    /// batch with the session's removal. While a form of it is being
    /// retired on its own (a close), the end waits for that: taking the
    /// form along would write its history twice, leaving it out would
    /// orphan it if that retirement fails (both found by the simulation).
    pub(super) fn end_session(&mut self, now: u64, call: Option<CallId>, session: &str, reason: &str) {
        let Some(state) = self.state.session(session) else {
            if let Some(call) = call {
                self.reply(call, Err(Error::NotFound(format!("no session {session}"))));
            }
            return;
        };
        if state.ending {
            // Being ended already: that end answers for this one too.
            let calls = match self.deferred_ends.get_mut(session) {
                Some((calls, _)) => Some(calls),
                None => self.pending_end(session),
            };
            match (calls, call) {
                (Some(calls), Some(call)) => calls.push(call),
                (None, Some(call)) => self.reply(call, Ok(Reply::Done)),
                (_, None) => {}
            }
            return;
        }
        // No form of it may be presented meanwhile.
        let forms = self.state.begin_ending(session);
        let calls: Vec<CallId> = call.into_iter().collect();
        if forms
            .iter()
            .any(|id| self.state.form(id).is_some_and(|f| f.retiring))
        {
            self.deferred_ends
                .insert(session.to_owned(), (calls, reason.to_owned()));
            return;
        }
        self.retire_forms(now, calls, &forms, reason, Some(session.to_owned()));
    }

    /// `bus_name` left the bus: after the grace period, every session it
    /// still owns ends with reason `client-gone`.
    pub(super) fn owner_lost(&mut self, now: u64, bus_name: &str) {
        let sessions: Vec<String> = self
            .state
            .sessions_of(bus_name)
            .map(|s| s.record.id.clone())
            .collect();
        if sessions.is_empty() {
            return;
        }
        let at = now.saturating_add(self.config.broker.client_grace_ms);
        self.graces.insert((at, bus_name.to_owned()), sessions);
    }

    /// The grace periods due at `now` end.
    pub(super) fn graces_due(&mut self, now: u64) {
        while let Some(entry) = self.graces.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((_, owner), sessions) = entry.remove_entry();
            for session in sessions {
                let still_owned = self
                    .state
                    .session(&session)
                    .is_some_and(|s| s.record.owner == owner);
                if still_owned {
                    self.end_session(now, None, &session, "client-gone");
                }
            }
        }
    }
}
