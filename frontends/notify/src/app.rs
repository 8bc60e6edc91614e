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
//! * the broker withdraws it (answered elsewhere, claimed, timed out): the
//!   notification is closed;
//! * it still waits: it is notified again, and with urgency critical when
//!   its deadline is near (see [`crate::escalate`]); under Do Not Disturb
//!   only the critical notification goes out, the others are held back
//!   (the form stays here, quietly, for the tray and `elicit answer`).

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use elicit_i18n::tr;
use elicit_proto::{Elicitation, Limits};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::broker::{BrokerEvent, Link, ShowRequest};
use crate::card::{Card, Reply};
use crate::escalate::{Escalation, Schedule, Urgency};
use crate::quiet;
use crate::server::{self, Server, Signal};

/// A form held by this front-end: in a notification, or held back by Do
/// Not Disturb.
struct Shown {
    token: String,
    card: Card,
    /// The notification on screen, if any.
    notification: Option<u32>,
    escalation: Escalation,
}

/// The loop's state: the forms held, by form id.
pub struct App {
    link: Link,
    server: Server,
    schedule: Schedule,
    shown: HashMap<String, Shown>,
}

impl App {
    /// An app answering through `link`, notifying through `server`,
    /// reminding by `schedule`.
    pub fn new(link: Link, server: Server, schedule: Schedule) -> App {
        App {
            link,
            server,
            schedule,
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
            let wake = self.next_wake();
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
                _ = sleep_for(wake) => self.escalate().await,
            }
        }
        self.close_all().await;
        self.link.unregister().await;
    }

    async fn on_event(&mut self, event: BrokerEvent) {
        match event {
            BrokerEvent::Show(request) => self.show(*request).await,
            BrokerEvent::Withdraw(form) => {
                if let Some(shown) = self.shown.remove(&form)
                    && let Some(id) = shown.notification
                {
                    self.server.close(id).await;
                }
            }
            // Tokens from before are void: a new broker presents its
            // forms anew once this front-end has registered again.
            BrokerEvent::Gone => self.close_all().await,
        }
    }

    async fn show(&mut self, request: ShowRequest) {
        // Shown again (a new token): the old notification goes.
        if let Some(old) = self.shown.remove(&request.form)
            && let Some(id) = old.notification
        {
            self.server.close(id).await;
        }
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
        let quiet = quiet::do_not_disturb(self.link.connection()).await;
        let (escalation, urgency) = Escalation::start(&self.schedule, now_ms(), request.deadline_ms, quiet);
        let mut shown = Shown {
            token: request.token,
            card,
            notification: None,
            escalation,
        };
        if let Some(urgency) = urgency {
            match self.server.show(&notification(&shown.card, urgency)).await {
                Ok(id) => shown.notification = Some(id),
                Err(error) => {
                    eprintln!("elicit-notify: could not show a notification: {error}");
                    self.pass_on(&request.form, &shown.token).await;
                    return;
                }
            }
        } else {
            eprintln!(
                "elicit-notify: form {}: Do Not Disturb is on; holding it without a notification",
                request.form
            );
        }
        self.shown.insert(request.form, shown);
    }

    /// How long until the schedule next has something to do.
    fn next_wake(&self) -> Option<Duration> {
        let next = self
            .shown
            .values()
            .filter_map(|shown| shown.escalation.next_ms(&self.schedule))
            .min()?;
        Some(Duration::from_millis(next.saturating_sub(now_ms())))
    }

    /// Sends what the schedule says is due: reminders, critical
    /// notifications. A new notification replaces the old one (closed
    /// first, so that the server shows it anew rather than updating it in
    /// place, which several servers do silently).
    async fn escalate(&mut self) {
        let now = now_ms();
        let quiet = quiet::do_not_disturb(self.link.connection()).await;
        let forms: Vec<String> = self.shown.keys().cloned().collect();
        for form in forms {
            let Some(shown) = self.shown.get_mut(&form) else {
                continue;
            };
            let Some(urgency) = shown.escalation.step(&self.schedule, now, quiet) else {
                continue;
            };
            // Forgotten before it is closed, so that its `Closed` signal
            // is not taken for a dismissal.
            if let Some(old) = shown.notification.take() {
                self.server.close(old).await;
            }
            match self.server.show(&notification(&shown.card, urgency)).await {
                Ok(id) => shown.notification = Some(id),
                // The form stays held: the next step, the tray or `elicit
                // answer` still reach it.
                Err(error) => eprintln!("elicit-notify: form {form}: could not notify again: {error}"),
            }
        }
    }

    /// The form whose notification is `id`.
    fn form_of(&self, id: u32) -> Option<String> {
        self.shown
            .iter()
            .find(|(_, shown)| shown.notification == Some(id))
            .map(|(form, _)| form.clone())
    }

    async fn on_signal(&mut self, signal: Signal) {
        match signal {
            Signal::Action { id, key } => {
                let Some(form) = self.form_of(id) else { return };
                let Some(reply) = self.shown.get(&form).and_then(|s| s.card.reply(&key)).cloned() else {
                    return;
                };
                let Some(shown) = self.shown.remove(&form) else {
                    return;
                };
                match reply {
                    Reply::Answer(answer) => {
                        if let Err(error) = self.link.answer(&form, &shown.token, &answer).await {
                            eprintln!("elicit-notify: form {form}: answer refused: {}", error.detail());
                        }
                    }
                    Reply::PassOn => self.pass_on(&form, &shown.token).await,
                }
                // Resident notifications stay after an action; this one
                // is done.
                self.server.close(id).await;
            }
            Signal::Closed { id, reason } => {
                // This program forgets a notification before it closes
                // one, so one still here was dismissed, expired or closed
                // by someone else: not an answer, and no longer on screen.
                if let Some(form) = self.form_of(id)
                    && let Some(shown) = self.shown.remove(&form)
                {
                    eprintln!(
                        "elicit-notify: form {form}: notification closed (reason {reason}); passing it on"
                    );
                    self.pass_on(&form, &shown.token).await;
                }
            }
            Signal::ServerChanged(_) => {
                self.server.refresh_capabilities().await;
                // The notifications went with the old server.
                let gone: Vec<(String, Shown)> = self.shown.drain().collect();
                for (form, shown) in gone {
                    self.pass_on(&form, &shown.token).await;
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
        let ids: Vec<u32> = self
            .shown
            .drain()
            .filter_map(|(_, shown)| shown.notification)
            .collect();
        for id in ids {
            self.server.close(id).await;
        }
    }
}

/// The notification for `card` at `urgency`: a critical one says why.
fn notification(card: &Card, urgency: Urgency) -> notify_rust::Notification {
    let body = match urgency {
        Urgency::Normal => card.body.clone(),
        Urgency::Critical => format!(
            "{}\n\n{}",
            card.body,
            tr("Less than a minute left: then the form is cancelled.")
        ),
    };
    server::form_notification(&card.summary, &body, &card.icon, card.action_list(), urgency)
}

/// Sleeps for `wake`, or forever when nothing is scheduled.
async fn sleep_for(wake: Option<Duration>) {
    match wake {
        Some(wake) => tokio::time::sleep(wake).await,
        None => std::future::pending().await,
    }
}

/// The wall clock in ms since the epoch: the broker's deadlines are in it.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
