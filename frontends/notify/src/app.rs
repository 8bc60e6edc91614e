//! The front-end's one loop: forms from the broker become notifications,
//! checked signals from the notification server become answers.
//!
//! What happens to a form:
//! * the server has actions: a notification with the card's actions; an
//!   action answers the form (or passes it on, for "Open…");
//! * the server has no actions (or cannot be reached): a notification that
//!   says where to answer, and the form is passed on at once, since this
//!   front-end could never answer it;
//! * the user dismisses the notification, or it expires: the form is not
//!   declined. It is passed on: to another registered front-end, or a
//!   started front-end program, or it waits queued for one (`elicit list`
//!   shows it, `elicit answer` answers it);
//! * the broker withdraws it: the notification is closed.

use std::collections::HashMap;

use elicit_proto::{Elicitation, Limits};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::broker::{BrokerEvent, Link, ShowRequest};
use crate::card::{Card, Reply};
use crate::server::{self, Server, Signal};

/// A form shown in a notification.
struct Shown {
    form: String,
    token: String,
    card: Card,
}

/// The loop's state: notifications by id.
pub struct App {
    link: Link,
    server: Server,
    shown: HashMap<u32, Shown>,
}

impl App {
    /// An app answering through `link`, notifying through `server`.
    pub fn new(link: Link, server: Server) -> App {
        App {
            link,
            server,
            shown: HashMap::new(),
        }
    }

    /// Runs until the broker's channel or the bus connection closes, or
    /// `stop` resolves.
    pub async fn run(
        mut self,
        mut events: UnboundedReceiver<BrokerEvent>,
        stop: impl std::future::Future<Output = ()>,
    ) {
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                signal = self.server.next() => match signal {
                    Some(signal) => self.on_signal(signal).await,
                    None => break,
                },
                event = events.recv() => match event {
                    Some(event) => self.on_event(event).await,
                    None => break,
                },
            }
        }
        self.close_all().await;
        self.link.unregister().await;
    }

    async fn on_event(&mut self, event: BrokerEvent) {
        match event {
            BrokerEvent::Show(request) => self.show(*request).await,
            BrokerEvent::Withdraw(form) => {
                let ids: Vec<u32> = self
                    .shown
                    .iter()
                    .filter(|(_, shown)| shown.form == form)
                    .map(|(id, _)| *id)
                    .collect();
                for id in ids {
                    self.shown.remove(&id);
                    self.server.close(id).await;
                }
            }
            // Tokens from before are void: a new broker presents its
            // forms anew once this front-end has registered again.
            BrokerEvent::Gone => self.close_all().await,
        }
    }

    async fn show(&mut self, request: ShowRequest) {
        // The broker checked the request with its own limits, patterns
        // included: never refuse here what it accepted, nor compile again.
        let Ok(elicitation) = Elicitation::parse_checked_str(&request.request_json, &Limits::UNLIMITED)
        else {
            // A version mismatch: another front-end may read it.
            self.pass_on(&request.form, &request.token).await;
            return;
        };
        let markup = self.server.has_markup();
        if !self.server.has_actions() {
            let card = Card::without_actions(&elicitation, &request.origin, markup);
            let notification = server::info_notification(&card.summary, &card.body, &card.icon);
            if let Err(error) = self.server.show(&notification).await {
                eprintln!("elicit-notify: no notification server: {error}");
            }
            self.pass_on(&request.form, &request.token).await;
            return;
        }
        let card = Card::new(&elicitation, &request.origin, markup);
        let notification =
            server::form_notification(&card.summary, &card.body, &card.icon, card.action_list());
        match self.server.show(&notification).await {
            Ok(id) => {
                self.shown.insert(
                    id,
                    Shown {
                        form: request.form,
                        token: request.token,
                        card,
                    },
                );
            }
            Err(error) => {
                eprintln!("elicit-notify: could not show a notification: {error}");
                self.pass_on(&request.form, &request.token).await;
            }
        }
    }

    async fn on_signal(&mut self, signal: Signal) {
        match signal {
            Signal::Action { id, key } => {
                let Some(reply) = self.shown.get(&id).and_then(|s| s.card.reply(&key)).cloned() else {
                    return;
                };
                let Some(shown) = self.shown.remove(&id) else {
                    return;
                };
                match reply {
                    Reply::Answer(answer) => {
                        if let Err(error) = self.link.answer(&shown.form, &shown.token, &answer).await {
                            eprintln!(
                                "elicit-notify: form {}: answer refused: {}",
                                shown.form,
                                error.detail()
                            );
                        }
                    }
                    Reply::PassOn => self.pass_on(&shown.form, &shown.token).await,
                }
                // Resident notifications stay after an action; this one
                // is done.
                self.server.close(id).await;
            }
            Signal::Closed { id, reason } => {
                // This program forgets a notification before it closes
                // one, so one still here was dismissed, expired or closed
                // by someone else: not an answer, and no longer on screen.
                if let Some(shown) = self.shown.remove(&id) {
                    eprintln!(
                        "elicit-notify: form {}: notification closed (reason {reason}); passing it on",
                        shown.form
                    );
                    self.pass_on(&shown.form, &shown.token).await;
                }
            }
            Signal::ServerChanged(_) => {
                self.server.refresh_capabilities().await;
                // The notifications went with the old server.
                let gone: Vec<Shown> = self.shown.drain().map(|(_, shown)| shown).collect();
                for shown in gone {
                    self.pass_on(&shown.form, &shown.token).await;
                }
            }
        }
    }

    async fn pass_on(&self, form: &str, token: &str) {
        if let Err(error) = self.link.pass_on(form, token).await {
            eprintln!(
                "elicit-notify: form {form}: could not pass it on: {}",
                error.detail()
            );
        }
    }

    async fn close_all(&mut self) {
        let ids: Vec<u32> = self.shown.drain().map(|(id, _)| id).collect();
        for id in ids {
            self.server.close(id).await;
        }
    }
}
