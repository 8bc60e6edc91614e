//! Start-up: rebuilding the core from what was durable.

use std::collections::HashSet;
use std::sync::Arc;

use elicit_proto::Elicitation;

use super::pending::Pending;
use super::state::live_form;
use super::{Core, Effect, Object, Registration, Write};
use crate::store::{FormRecord, FormState, SessionRecord};

/// Everything durable, as the store read it at start-up.
#[derive(Debug, Default, Clone)]
pub struct Restored {
    /// Every session.
    pub sessions: Vec<SessionRecord>,
    /// Every form in submission order, with whether its content file is
    /// gone (it was acknowledged and erased just before a crash).
    pub forms: Vec<(FormRecord, bool)>,
    /// The forms that have an answer content file.
    pub answer_files: Vec<u64>,
    /// Front-end registrations, by id.
    pub registrations: Vec<(String, Registration)>,
    /// The first id not taken.
    pub next_id: u64,
}

impl Core {
    /// Takes back everything stored: presented forms return to their
    /// queues, deadlines are armed again, sessions whose owner is not in
    /// `on_bus` get their grace period, and registrations whose front-end
    /// left go. Returns (sessions, forms) restored.
    pub fn restore(
        &mut self,
        now: u64,
        restored: Restored,
        on_bus: &HashSet<String>,
    ) -> ((usize, usize), Vec<Effect>) {
        let Restored {
            sessions,
            forms,
            answer_files,
            registrations,
            next_id,
        } = restored;
        self.next_id = self.next_id.max(next_id);
        let mut writes = Vec::new();
        let mut returning = HashSet::new();
        for (id, registration) in registrations {
            if on_bus.contains(&registration.bus_name) {
                returning.insert(registration.bus_name.clone());
                self.registrations.insert(id, registration);
            } else {
                writes.push(Write::RemoveRegistration(id));
            }
        }
        if !returning.is_empty() {
            self.effects.push(Effect::AwaitReturning(returning));
        }
        let mut owners_gone = HashSet::new();
        for record in &sessions {
            self.next_id = self.next_id.max(record.id.parse::<u64>().map_or(0, |id| id + 1));
            self.effects
                .push(Effect::Export(Object::Session(record.id.clone())));
            if !on_bus.contains(&record.owner) {
                owners_gone.insert(record.owner.clone());
            }
            self.state.open_session(record.clone());
        }
        let mut restored = 0;
        for (record, delivered) in forms {
            self.next_id = self.next_id.max(record.id + 1);
            // Checked when it came in: read back without compiling its
            // patterns, whose cost the sender chose (64 forms of 64 large
            // patterns once held a restart 20 s before it answered).
            let request = Elicitation::parse_checked_str(record.request.as_str(), &self.config.limits)
                .map_err(|e| e.to_string());
            let request = match request {
                Ok(request) => request,
                Err(errors) => {
                    // Limits may have shrunk since it was stored; such a
                    // form can no longer be shown, so it ends rather than
                    // blocks.
                    tracing::warn!(form = record.id, %errors, "a stored form no longer passes the checks; dropping it");
                    writes.push(Write::RemoveForm(record.id));
                    continue;
                }
            };
            if self.state.session(&record.session).is_none() {
                writes.push(Write::RemoveForm(record.id));
                continue;
            }
            let request = Arc::new(request.without_raw());
            if delivered {
                // Acknowledged and erased just before the crash: it goes
                // to history, not to its owner a second time.
                writes.push(Write::History(self.history(now, &record, &request, true)));
                writes.push(Write::RemoveForm(record.id));
                continue;
            }
            let (id, session) = (record.id, record.session.clone());
            if record.state != FormState::Answered
                && let Some(deadline) = record.deadline_ms
            {
                self.deadlines.arm(id, deadline);
            }
            self.state.restore(live_form(record, request));
            self.effects.push(Effect::Export(Object::Form(session, id)));
            restored += 1;
        }
        // Content files no live answered form points to: written before a
        // crash that came before the store recorded the answer, or of
        // forms dropped since.
        for id in answer_files {
            if !self.state.form(&id).is_some_and(|f| f.record.content_in_file) {
                tracing::info!(form = id, "erasing an answer's content nobody waits for");
                writes.push(Write::EraseAnswer(id));
            }
        }
        if !writes.is_empty() {
            self.write(writes, Some(Pending::Startup));
        }
        for owner in owners_gone {
            self.owner_lost(now, &owner);
        }
        ((sessions.len(), restored), std::mem::take(&mut self.effects))
    }
}
