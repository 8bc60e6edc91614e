//! The simulation's random step: clients, front-ends, storage and the clock.

use super::*;

impl World {
    pub(super) fn step(&mut self) {
        self.steps += 1;
        let roll = self.rng.random_range(0..100);
        match roll {
            0..=5 => {
                let name = self.name();
                self.clients.insert(
                    name.clone(),
                    Client {
                        alive: true,
                        ..Client::default()
                    },
                );
                self.log.push(format!("{name} opens a session"));
                self.call(
                    &name,
                    Call::OpenSession(Default::default()),
                    Asked::Open { client: name.clone() },
                );
            }
            6..=8 => {
                if let Some(client) = self.pick(&self.live_clients()) {
                    self.log.push(format!("{client} opens another session"));
                    self.call(
                        &client,
                        Call::OpenSession(Default::default()),
                        Asked::Open {
                            client: client.clone(),
                        },
                    );
                }
            }
            9..=24 => {
                let Some((client, session)) = self.pick_of_a_live_client(|c| &c.sessions) else {
                    return;
                };
                let sid = format!("sid{}", self.rng.random_range(0..1_000_000));
                let timeout = self.rng.random_bool(0.3).then(|| self.rng.random_range(1..10));
                if let Some(c) = self.clients.get_mut(&client) {
                    c.sids.push((session.clone(), sid.clone()));
                }
                self.log.push(format!("{client} submits to {session}"));
                let asked = Asked::Elicit {
                    session: session.clone(),
                };
                self.call(&client, elicit(&session, Some(&sid), timeout), asked);
            }
            25..=27 => {
                let Some((client, (session, sid))) = self.pick_of_a_live_client(|c| &c.sids) else {
                    return;
                };
                self.log.push(format!("{client} resubmits {sid}"));
                let asked = Asked::Elicit {
                    session: session.clone(),
                };
                self.call(&client, elicit(&session, Some(&sid), None), asked);
            }
            28..=33 => {
                let Some((client, form)) = self.pick_of_a_live_client(|c| &c.answered) else {
                    return;
                };
                self.delivered.insert(form);
                self.log.push(format!("{client} acknowledges {form}"));
                self.call(&client, Call::Acknowledge(form), Asked::Other);
            }
            34..=35 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                let forms: Vec<u64> = self
                    .acknowledged
                    .iter()
                    .filter(|(_, s)| self.clients[&client].sessions.contains(s))
                    .map(|(f, _)| *f)
                    .collect();
                let Some(form) = self.pick(&forms) else { return };
                self.log.push(format!("{client} closes form {form}"));
                self.call(&client, Call::CloseForm(form), Asked::Other);
            }
            36..=37 => {
                let Some((client, session)) = self.pick_of_a_live_client(|c| &c.sessions) else {
                    return;
                };
                self.log.push(format!("{client} closes session {session}"));
                self.call(&client, Call::CloseSession(session), Asked::Other);
            }
            38..=40 => {
                let Some(client) = self.pick(&self.live_clients()) else {
                    return;
                };
                if let Some(c) = self.clients.get_mut(&client) {
                    c.alive = false;
                }
                self.log.push(format!("{client} vanishes"));
                self.input(Input::NameLost(client));
            }
            41..=42 => {
                // A new connection re-attaches to a session of a vanished
                // client.
                let orphans: Vec<(String, String)> = self
                    .owners
                    .iter()
                    .filter(|(_, (owner, _))| self.clients.get(owner).is_some_and(|c| !c.alive))
                    .map(|(s, (_, token))| (s.clone(), token.clone()))
                    .collect();
                let Some((session, token)) = self.pick(&orphans) else {
                    return;
                };
                let name = self.name();
                self.clients.insert(
                    name.clone(),
                    Client {
                        alive: true,
                        ..Client::default()
                    },
                );
                self.log.push(format!("{name} resumes {session}"));
                let asked = Asked::Resume {
                    client: name.clone(),
                    session,
                };
                self.call(&name, Call::ResumeSession(token), asked);
            }
            43..=46 => {
                let name = self.name();
                self.frontends.insert(
                    name.clone(),
                    Frontend {
                        alive: true,
                        registered: true,
                        ..Frontend::default()
                    },
                );
                self.log.push(format!("front-end {name} registers"));
                self.call(&name, Call::RegisterFrontend(frontend("gtk")), Asked::Other);
            }
            47..=48 if self.rng.random_bool(0.5) => {
                let stalled: Vec<String> = self
                    .frontends
                    .iter()
                    .filter(|(_, f)| f.alive && f.registered && f.stalled)
                    .map(|(n, _)| n.clone())
                    .collect();
                let Some(name) = self.pick(&stalled) else { return };
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.stalled = false;
                }
                // It comes back by its reply to a recall, or by a call.
                if self.rng.random_bool(0.5) {
                    self.log.push(format!("front-end {name} answers again"));
                    self.input(Input::FrontendAnswered(name));
                } else {
                    self.log.push(format!("front-end {name} calls again"));
                    self.call(&name, Call::Counts, Asked::Other);
                }
            }
            47..=48 => {
                let gone: Vec<String> = self
                    .frontends
                    .iter()
                    .filter(|(_, f)| f.alive && !f.registered)
                    .map(|(n, _)| n.clone())
                    .collect();
                let Some(name) = self.pick(&gone) else { return };
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.registered = true;
                    f.stalled = false;
                }
                self.log.push(format!("front-end {name} registers again"));
                self.call(&name, Call::RegisterFrontend(frontend("gtk")), Asked::Other);
            }
            49..=60 => {
                let Some(name) = self.pick(&self.live_frontends()) else {
                    return;
                };
                let shown: Vec<(u64, String)> = self.frontends[&name].shown.clone().into_iter().collect();
                let Some((form, token)) = self.pick(&shown) else {
                    return;
                };
                let (token, content) = match self.rng.random_range(0..10) {
                    0 => ("wrong".to_owned(), r#"{"name": "Ada"}"#),
                    1 => (token, r#"{"name": 7}"#),
                    _ => (token, r#"{"name": "Ada"}"#),
                };
                self.log.push(format!("front-end {name} answers {form}"));
                let call = Call::Answer {
                    form,
                    token,
                    action: "accept".into(),
                    content: content.into(),
                    remember: crate::core::Remember::No,
                };
                self.call(
                    &name,
                    call,
                    Asked::Answer {
                        frontend: name.clone(),
                        form,
                    },
                );
            }
            61..=62 => {
                let Some(name) = self.pick(&self.live_frontends()) else {
                    return;
                };
                let shown: Vec<u64> = self.frontends[&name].shown.keys().copied().collect();
                let Some(form) = self.pick(&shown) else { return };
                if self.rng.random_bool(0.5) {
                    // Paused past the Show's time: set aside, its forms
                    // recalled (the core's Recall clears them).
                    if let Some(f) = self.frontends.get_mut(&name) {
                        f.stalled = true;
                    }
                    self.log
                        .push(format!("front-end {name} leaves the Show of {form} unanswered"));
                    self.input(Input::ShowUnanswered { form, bus_name: name });
                    return;
                }
                // Its Show failed: the core counts it as gone; it may
                // register again later.
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.registered = false;
                    f.stalled = false;
                    f.shown.clear();
                }
                self.log.push(format!("front-end {name} fails to show {form}"));
                self.input(Input::ShowFailed { form, bus_name: name });
            }
            63..=64 => {
                let Some(name) = self.pick(&self.live_frontends()) else {
                    return;
                };
                if let Some(f) = self.frontends.get_mut(&name) {
                    f.alive = false;
                    f.shown.clear();
                }
                self.log.push(format!("front-end {name} vanishes"));
                self.input(Input::NameLost(name));
            }
            65..=84 => self.storage(),
            85..=86 => {
                self.full = !self.full;
                self.log.push(format!(
                    "the disk is {}",
                    if self.full { "full" } else { "drained" }
                ));
            }
            87..=97 => self.tick(),
            _ => {
                if self.rng.random_bool(0.5) {
                    self.restart(true);
                }
            }
        }
    }
}
