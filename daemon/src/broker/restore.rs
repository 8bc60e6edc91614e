//! Start-up: rebuilding the live state from sled after a restart.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use elicit_proto::dbus::{form_path, session_path};
use elicit_proto::{Elicitation, Error};

use super::Broker;
use super::forms::live_form;
use crate::bus::{RequestIface, SessionIface};
use crate::store::{Batch, FormState, Loaded};

/// How long a daemon that starts while front-ends it served are still on
/// the bus waits for them to register again before it starts a front-end
/// program itself; they need two round trips (prove, resume), so this is
/// for a loaded machine.
const RETURNING_FRONTENDS: Duration = Duration::from_secs(2);

impl Broker {
    /// Loads every stored session and form: presented forms return to their
    /// queues, deadlines are re-armed, and sessions whose owner has left the
    /// bus get their grace period. Returns (sessions, forms) restored.
    pub async fn restore(self: &Arc<Self>, loaded: Loaded) -> Result<(usize, usize), Error> {
        let Loaded {
            sessions,
            forms,
            answer_files,
            ..
        } = loaded;
        // What start-up changes, made durable in one commit at the end.
        let mut batch = Batch::new();
        // One ListNames instead of a NameHasOwner per session: a restart
        // with a thousand sessions must not cost a thousand round trips.
        let dbus = zbus::fdo::DBusProxy::new(&self.conn).await?;
        let on_bus: HashSet<String> = dbus
            .list_names()
            .await
            .map_err(zbus::Error::from)?
            .into_iter()
            .map(|name| name.to_string())
            .collect();
        let returning = self.prune_registrations(&on_bus);
        if let Some(until) = self.launcher.await_returning(returning, RETURNING_FRONTENDS) {
            // Held weakly, as every task the broker owns.
            let broker = Arc::downgrade(self);
            self.spawn(async move {
                tokio::time::sleep_until(until).await;
                if let Some(broker) = broker.upgrade()
                    && broker.launcher.end_grace()
                {
                    broker.dispatch_all();
                }
            });
        }
        let mut owners_gone = HashSet::new();
        for record in &sessions {
            let server = self.conn.object_server();
            server
                .at(
                    session_path(&record.id).as_str(),
                    SessionIface::new(self.clone(), record.id.clone()),
                )
                .await?;
            if !on_bus.contains(&record.owner) {
                owners_gone.insert(record.owner.clone());
            }
            self.lock().open_session(record.clone());
        }
        let mut restored = 0;
        let mut acknowledged = Vec::new();
        for (record, delivered) in forms {
            let parsed =
                serde_json::from_str(record.request.as_str()).map_err(|e| Error::Storage(e.to_string()))?;
            let request = match Elicitation::from_value(parsed, &self.config.limits) {
                Ok(request) => request,
                Err(errors) => {
                    // Limits may have shrunk since it was stored; such a form
                    // can no longer be shown, so it ends rather than blocks.
                    tracing::warn!(form = record.id, %errors, "a stored form no longer passes the checks; dropping it");
                    batch.remove_form(record.id).erase_answer(record.id);
                    continue;
                }
            };
            if self.lock().session(&record.session).is_none() {
                batch.remove_form(record.id).erase_answer(record.id);
                continue;
            }
            let form = live_form(record.clone(), Arc::new(request.without_raw()));
            if delivered {
                // Acknowledged and erased just before the crash: it goes
                // to history, not to its owner a second time.
                acknowledged.push(form);
                continue;
            }
            self.lock().restore(form);
            self.conn
                .object_server()
                .at(
                    form_path(&record.session, &record.id.to_string()).as_str(),
                    RequestIface::new(self.clone(), record.id),
                )
                .await?;
            if record.state != FormState::Answered
                && let Some(deadline) = record.deadline_ms
            {
                self.arm_deadline(record.id, deadline);
            }
            restored += 1;
        }
        for form in &acknowledged {
            batch.append(self.retired_batch(&form.record, &form.request, true));
            self.forget_retired(&form.record).await;
        }
        self.sweep_answers(&answer_files, &mut batch);
        self.store.commit(batch).await?;
        for owner in owners_gone {
            self.owner_lost(&owner);
        }
        Ok((sessions.len(), restored))
    }
}
