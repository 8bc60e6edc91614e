//! The forms presented to this front-end, in arrival order, and which one
//! the window shows: no GTK here, so it is tested without a display.

use std::collections::HashMap;

pub use elicit_form::Body;
use elicit_i18n::{fill, tr};
pub use elicit_link::Entry;
use elicit_proto::Error;

use crate::bus::{AnswerError, ShowRequest};
use crate::reasons::withdrawn_notice;

/// The window title: who asks, for whom.
pub fn title(entry: &Entry) -> String {
    let template = match (&entry.origin.server, entry.origin.remote) {
        (Some(_), false) => tr("{server} asks, for {host}"),
        (Some(_), true) => tr("{server} asks, for {host} (remote machine)"),
        (None, false) => tr("An unnamed server asks, for {host}"),
        (None, true) => tr("An unnamed server asks, for {host} (remote machine)"),
    };
    fill(&template, &[("server", &entry.server()), ("host", &entry.host())])
}

/// Every form presented here; the window shows the first.
#[derive(Debug, Default)]
pub struct Queue {
    entries: Vec<Entry>,
    /// Forms queued behind the presented one, per session.
    backlog: HashMap<String, usize>,
    /// Why the last shown form went away, when the broker took it.
    notice: Option<String>,
}

impl Queue {
    /// The form the window shows.
    pub fn current(&self) -> Option<&Entry> {
        self.entries.first()
    }

    /// The form the window shows, to edit.
    pub fn current_mut(&mut self) -> Option<&mut Entry> {
        self.entries.first_mut()
    }

    /// The form `form`, to edit.
    pub fn get_mut(&mut self, form: &str) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.form == form)
    }

    /// How many forms wait after the shown one: presented here, or queued
    /// behind a presented one in the broker.
    pub fn waiting(&self) -> usize {
        self.entries.len().saturating_sub(1) + self.backlog.values().sum::<usize>()
    }

    /// The banner to show, if any.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Drops the banner (the user closed it, or it timed out).
    pub fn clear_notice(&mut self) {
        self.notice = None;
    }

    /// The broker presents a form (again, if it was shown before: the new
    /// token replaces the old). A new form waits behind the shown one.
    pub fn show(&mut self, show: ShowRequest) {
        let entry = Entry::new(show);
        match self.entries.iter_mut().find(|e| e.form == entry.form) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// Brings `form` to the front: the user chose it (in the tray).
    /// Returns whether it is here.
    pub fn promote(&mut self, form: &str) -> bool {
        let Some(index) = self.entries.iter().position(|e| e.form == form) else {
            return false;
        };
        let entry = self.entries.remove(index);
        self.entries.insert(0, entry);
        true
    }

    /// The broker withdraws a form; withdrawing the shown one leaves a
    /// notice saying why.
    pub fn withdraw(&mut self, form: &str, reason: &str) {
        let Some(index) = self.entries.iter().position(|e| e.form == form) else {
            return;
        };
        let entry = self.entries.remove(index);
        if index == 0 {
            self.notice = Some(withdrawn_notice(&entry.server(), reason));
        }
    }

    /// Sets the per-session backlog.
    pub fn set_backlog(&mut self, backlog: HashMap<String, usize>) {
        self.backlog = backlog;
    }

    /// The broker is gone: its tokens are void, its forms will be shown
    /// again when it returns.
    pub fn broker_gone(&mut self, why: String) {
        if !self.entries.is_empty() {
            self.notice = Some(format!("{why}. The open forms will come back when it does."));
        }
        self.entries.clear();
        self.backlog.clear();
    }

    /// Marks `form` as being sent.
    pub fn sending(&mut self, form: &str) {
        if let Some(entry) = self.get_mut(form) {
            entry.sending = true;
            entry.status = None;
        }
    }

    /// The broker's reply to an answer: the form goes, or stays with the
    /// reason (field errors go to their fields).
    pub fn answered(&mut self, form: &str, result: Result<(), AnswerError>) {
        let Some(index) = self.entries.iter().position(|e| e.form == form) else {
            return;
        };
        let entry = &mut self.entries[index];
        entry.sending = false;
        match result {
            Ok(()) => {
                self.entries.remove(index);
                // The banner was about what came before this answer.
                self.notice = None;
            }
            Err(AnswerError::Broker(Error::InvalidAnswer(json))) => {
                let errors = elicit_form::parse_field_errors(&json);
                if let Some(model) = entry.model_mut() {
                    model.apply_server_errors(&errors);
                    entry.status = Some(tr("elicitd refused the answer: see the marked fields."));
                } else {
                    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    let text = text.join("; ");
                    entry.status = Some(fill(
                        &tr("elicitd refused the answer: {errors}"),
                        &[("errors", &text)],
                    ));
                }
            }
            // Nothing was sent: the user may decline, or open it by hand.
            Err(AnswerError::Open(error)) => {
                entry.status = Some(fill(
                    &tr("{error}. Copy the address yourself, or decline."),
                    &[("error", &error)],
                ));
            }
            // The broker is unreachable: keep the form, the user may retry.
            Err(AnswerError::Broker(error)) if error.broker_unreachable() => {
                entry.status = Some(fill(
                    &tr("Could not reach elicitd: {error}"),
                    &[("error", &error)],
                ));
            }
            // The form is gone or no longer ours.
            Err(AnswerError::Broker(error)) => {
                let server = entry.server();
                self.entries.remove(index);
                let text = tr("The answer to {server} was not taken: {error}.");
                self.notice = Some(fill(&text, &[("server", &server), ("error", &error.detail())]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_proto::Origin;

    fn show(form: &str, json: &str) -> ShowRequest {
        ShowRequest {
            form: form.into(),
            token: format!("t{form}"),
            request_json: json.into(),
            origin: Origin {
                server: Some(format!("server{form}")),
                host: Some("agent".into()),
                ..Default::default()
            },
            session: format!("s{form}"),
            queued_at_ms: 0,
            deadline_ms: 0,
        }
    }

    const CONFIRM: &str = r#"{"message":"Go?","requestedSchema":{"type":"object","properties":{}}}"#;
    const URL: &str =
        r#"{"mode":"url","message":"Sign in","url":"https://example.com/a","elicitationId":"e"}"#;

    #[test]
    fn the_first_form_is_shown_and_others_wait() {
        let mut queue = Queue::default();
        queue.show(show("1", CONFIRM));
        queue.show(show("2", URL));
        assert_eq!(queue.current().map(|e| e.form.as_str()), Some("1"));
        assert_eq!(
            queue.current().map(title).as_deref(),
            Some("server1 asks, for agent")
        );
        queue.set_backlog(HashMap::from([("s1".to_owned(), 2)]));
        assert_eq!(queue.waiting(), 3);
        queue.answered("1", Ok(()));
        assert!(matches!(queue.current().map(|e| &e.body), Some(Body::Url(_))));
    }

    #[test]
    fn a_form_chosen_in_the_tray_comes_first() {
        let mut queue = Queue::default();
        for form in ["1", "2", "3"] {
            queue.show(show(form, CONFIRM));
        }
        assert!(queue.promote("3"));
        let order: Vec<&str> = queue.entries.iter().map(|e| e.form.as_str()).collect();
        assert_eq!(order, ["3", "1", "2"]);
        assert!(!queue.promote("9"), "a form not here");
    }

    #[test]
    fn withdrawing_the_shown_form_says_why() {
        let mut queue = Queue::default();
        queue.show(show("1", CONFIRM));
        queue.show(show("2", CONFIRM));
        queue.withdraw("2", "timeout");
        assert_eq!(queue.notice(), None, "a waiting form goes quietly");
        queue.withdraw("1", "answered");
        assert_eq!(
            queue.notice(),
            Some("The request from server1 was answered elsewhere.")
        );
        assert!(queue.current().is_none());
    }

    #[test]
    fn a_refused_answer_marks_its_field() {
        let json = r#"{"message":"Who?","requestedSchema":{"type":"object",
            "properties":{"name":{"type":"string"}}}}"#;
        let mut queue = Queue::default();
        queue.show(show("1", json));
        queue.sending("1");
        let refusal = Error::InvalidAnswer(r#"[{"field":"name","message":"is taken"}]"#.into());
        queue.answered("1", Err(refusal.into()));
        let entry = queue.current().expect("the form stays");
        assert!(!entry.sending);
        let model = entry.model().expect("a form");
        assert_eq!(model.visible_error(0), Some("is taken"));
    }
}
