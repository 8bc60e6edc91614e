//! The invariants checked after every step.

use super::*;

impl World {
    /// The invariants of issue 27, after every step.
    pub(super) fn check(&self) {
        let state = self.core.state();
        for session in state.sessions() {
            // At most one presented form per session, and only its head.
            let presented: Vec<u64> = session
                .forms
                .iter()
                .copied()
                .filter(|id| state.form(id).is_some_and(|f| f.presenter.is_some()))
                .collect();
            if presented.len() > 1 {
                self.fail(&format!("session {} presents {presented:?}", session.record.id));
            }
            if let Some(id) = presented.first()
                && session.queue.front() != Some(id)
            {
                self.fail(&format!("form {id} is presented but is not its session's head"));
            }
            // Queue order is submission order.
            if session
                .queue
                .iter()
                .zip(session.queue.iter().skip(1))
                .any(|(a, b)| a >= b)
            {
                self.fail(&format!(
                    "session {} queues {:?}",
                    session.record.id, session.queue
                ));
            }
        }
        // Every acknowledged submission is pending, answered, or in
        // history exactly once with a reason.
        let mut records: HashMap<u64, Vec<&HistoryRecord>> = HashMap::new();
        for record in &self.disk.history {
            records.entry(record.form).or_default().push(record);
        }
        if let Some((form, twice)) = records.iter().find(|(_, r)| r.len() > 1) {
            self.fail(&format!("form {form} has {} history records", twice.len()));
        }
        for form in self.acknowledged.keys() {
            let live = state.form(form).is_some();
            let retiring = self.queue.iter().any(|q| {
                q.writes
                    .iter()
                    .any(|w| matches!(w, Write::History(h) if h.form == *form))
            });
            let ended = records.get(form).is_some_and(|r| !r[0].reason.is_empty());
            // Its owner had the outcome and acknowledged it: done, even if
            // the lazily flushed acknowledgement is lost (the outcome
            // comes back after a restart, as pending).
            let delivered = self.delivered.contains(form);
            if !live && !ended && !retiring && !delivered {
                self.fail(&format!(
                    "acknowledged form {form} is neither pending, answered nor withdrawn"
                ));
            }
        }
        // Nothing stays presented to a front-end that is gone, and what a
        // front-end shows is what the core presents to it.
        for form in state.forms() {
            if let Some(p) = &form.presenter
                && !self
                    .frontends
                    .get(&p.bus_name)
                    .is_some_and(|f| f.alive && f.registered)
            {
                self.fail(&format!(
                    "form {} is presented to {}, which is gone",
                    form.record.id, p.bus_name
                ));
            }
        }
        // A front-end set aside is presented nothing, and counts as no
        // front-end; one that came back counts again.
        for form in state.forms() {
            if let Some(p) = &form.presenter
                && self.frontends.get(&p.bus_name).is_some_and(|f| f.stalled)
            {
                self.fail(&format!(
                    "form {} is presented to {}, which left a Show unanswered",
                    form.record.id, p.bus_name
                ));
            }
        }
        let serving = self
            .frontends
            .iter()
            .filter(|(_, f)| f.alive && f.registered && !f.stalled)
            .count();
        if state.counts().2 != serving {
            self.fail(&format!(
                "Frontends is {}, but {serving} front-ends serve",
                state.counts().2
            ));
        }
        for (name, f) in self.frontends.iter().filter(|(_, f)| f.alive && f.registered) {
            for id in f.shown.keys() {
                let answering = self
                    .asked
                    .values()
                    .any(|a| matches!(a, Asked::Answer { frontend, form } if frontend == name && form == id));
                let presented = state
                    .form(id)
                    .and_then(|f| f.presenter.as_ref())
                    .is_some_and(|p| &p.bus_name == name);
                if !presented && !answering {
                    self.fail(&format!(
                        "{name} still shows form {id}, which the core no longer presents to it"
                    ));
                }
            }
        }
        // Deadlines: the core asks to be woken no later than the earliest.
        if let (Some(earliest), timeout) = (self.core.deadlines.earliest(), self.core.next_timeout())
            && timeout.is_none_or(|t| t > earliest)
        {
            self.fail("the next timeout is later than the earliest deadline");
        }
        for form in state.forms() {
            let waiting = form.ready
                && form.record.state != FormState::Answered
                && !form.finishing
                && !form.retiring
                && form.record.deadline_ms.is_some();
            if waiting && self.core.deadlines.of(form.record.id).is_none() {
                self.fail(&format!("form {} has a deadline nobody watches", form.record.id));
            }
        }
    }
}

/// A batch in a few words, for the log of a failing seed.
pub(super) fn describe(writes: &[Write]) -> String {
    let words: Vec<String> = writes
        .iter()
        .map(|w| match w {
            Write::PutSession(s) => format!("session {}", s.id),
            Write::RemoveSession(id) => format!("-session {id}"),
            Write::PutForm(f) => format!("form {} {}", f.id, f.state.name()),
            Write::RemoveForm(id) => format!("-form {id}"),
            Write::EraseAnswer(id) => format!("-answer {id}"),
            Write::History(h) => format!("history {} {}", h.form, h.reason),
            Write::PutRegistration(id, _) => format!("registration {id}"),
            Write::RemoveRegistration(id) => format!("-registration {id}"),
        })
        .collect();
    words.join(", ")
}
