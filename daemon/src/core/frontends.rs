//! Front-ends: registration (plain, or with a secret the broker proves it
//! knows after a restart), and losing them.

use elicit_proto::Error;

use super::pending::Pending;
use super::state::Frontend;
use super::{CallId, Caller, Core, Effect, FrontendSpec, Registration, Reply, Write};

impl Core {
    /// `RegisterFrontend`.
    pub(super) fn register_frontend(
        &mut self,
        caller: &Caller,
        spec: FrontendSpec,
    ) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("register as a front-end")?;
        self.add_frontend(&caller.name, spec);
        Ok(Some(Reply::Done))
    }

    fn add_frontend(&mut self, bus_name: &str, spec: FrontendSpec) {
        let frontend = self.state.add_frontend(Frontend {
            bus_name: bus_name.to_owned(),
            path: spec.path,
            name: spec.name.unwrap_or_else(|| bus_name.to_owned()),
            capabilities: spec.capabilities,
            priority: spec.priority,
            // Set by the state: registration order.
            order: 0,
        });
        tracing::info!(frontend = %frontend.name, bus_name = %frontend.bus_name, "front-end registered");
        self.effects.push(Effect::Registered(frontend.bus_name));
        self.dispatch_all();
    }

    /// `bus_name` no longer presents anything: its forms go back to the
    /// head of their queues and on to the next front-end.
    pub(super) fn frontend_lost(&mut self, bus_name: &str) {
        let (frontend, sessions) = self.state.frontend_gone(bus_name);
        if let Some(frontend) = frontend {
            tracing::info!(frontend = %frontend.name, %bus_name, "front-end gone");
        }
        if !sessions.is_empty() {
            self.dispatch(sessions);
        }
    }

    /// A `Show` to `bus_name` got no reply in time. It may be paused
    /// (Ctrl-Z) rather than gone: it is set aside, not forgotten. Each form
    /// it shows goes to the best other front-end, and it is told to
    /// withdraw them ([`Effect::Recall`]), a call that goes out after the
    /// unanswered `Show` and whose reply brings it back.
    pub(super) fn show_unanswered(&mut self, form: u64, bus_name: &str) {
        let Some((frontend, taken)) = self.state.frontend_stalled(bus_name) else {
            return;
        };
        tracing::warn!(
            form,
            frontend = %frontend.name,
            %bus_name,
            "a front-end left a Show unanswered; its forms go elsewhere until it answers again"
        );
        let mut sessions = Vec::with_capacity(taken.len());
        for back in taken {
            if let Some(path) = back.presenter.frontend_path {
                self.effects.push(Effect::Recall {
                    bus_name: back.presenter.bus_name,
                    path,
                    session: back.session.clone(),
                    form: back.form,
                });
            }
            self.form_changed(back.form, &back.session, "queued", "unanswered");
            sessions.push(back.session);
        }
        self.dispatch(sessions);
    }

    /// `bus_name` replied or called: if it was set aside, it is a front-end
    /// again, and forms nobody shows go to it.
    pub(super) fn frontend_answered(&mut self, bus_name: &str) {
        if let Some(frontend) = self.state.frontend_back(bus_name) {
            tracing::info!(frontend = %frontend.name, %bus_name, "a front-end set aside answers again");
            self.dispatch_all();
        }
    }

    /// `OpenFrontend`: registers `caller` once its new registration is
    /// stored, and returns the registration's id and secret.
    pub(super) fn open_frontend(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        spec: FrontendSpec,
    ) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("register as a front-end")?;
        self.drop_registrations(&caller.name);
        let id = self.take_id().to_string();
        let registration = Registration {
            secret: self.secret(),
            bus_name: caller.name.clone(),
            created_ms: now,
        };
        let writes = vec![Write::PutRegistration(id.clone(), registration.clone())];
        let then = Pending::OpenFrontend {
            call,
            id,
            registration,
            spec,
            caller: caller.name.clone(),
        };
        self.write(writes, Some(then));
        Ok(None)
    }

    pub(super) fn frontend_opened(
        &mut self,
        call: CallId,
        id: String,
        registration: Registration,
        spec: FrontendSpec,
        caller: &str,
    ) {
        let secret = registration.secret.clone();
        self.registrations.insert(id.clone(), registration);
        self.add_frontend(caller, spec);
        self.reply(call, Ok(Reply::Registration { id, secret }));
    }

    /// `ResumeFrontend`: registers `caller` again under registration `id`
    /// (after it checked this broker's proof).
    pub(super) fn resume_frontend(
        &mut self,
        caller: &Caller,
        spec: FrontendSpec,
        id: &str,
    ) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("register as a front-end")?;
        let registration = self
            .registrations
            .get_mut(id)
            .ok_or_else(|| Error::NotFound(format!("no front-end registration {id}")))?;
        if registration.bus_name != caller.name {
            registration.bus_name = caller.name.clone();
            let write = Write::PutRegistration(id.to_owned(), registration.clone());
            self.write(vec![write], None);
        }
        self.add_frontend(&caller.name, spec);
        Ok(Some(Reply::Done))
    }

    /// Forgets the registrations `bus_name` holds: it left, and its secret
    /// went with it.
    pub(super) fn drop_registrations(&mut self, bus_name: &str) {
        let gone: Vec<String> = self
            .registrations
            .iter()
            .filter(|(_, r)| r.bus_name == bus_name)
            .map(|(id, _)| id.clone())
            .collect();
        if gone.is_empty() {
            return;
        }
        let mut writes = Vec::new();
        for id in gone {
            self.registrations.remove(&id);
            writes.push(Write::RemoveRegistration(id));
        }
        self.write(writes, None);
    }
}
