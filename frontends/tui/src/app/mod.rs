//! The terminal front-end's state and what each key does to it.

mod edit;

use elicit_form::{FormModel, Input};
use elicit_i18n::{fill, tr, trn};
use elicit_proto::{ElicitationAction, Error};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

pub use elicit_link::Command;

use crate::bus::ShowRequest;
use crate::entry::{Body, Entry, reason_text};

/// A panel drawn over the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// Nothing.
    None,
    /// The list of keys.
    Help,
    /// "Open this URL?", waiting for y or n.
    ConfirmOpen,
}

/// Everything the screen shows.
#[derive(Debug)]
pub struct App {
    /// Presented forms, one per session at most, in order of arrival.
    pub entries: Vec<Entry>,
    /// The index of the entry being answered.
    pub selected: usize,
    /// The last thing that happened (a form withdrawn, answered…).
    pub notice: Option<String>,
    /// The server a "Sent to" notice is about: it shows only while no
    /// form or a form of that server is current, never under another
    /// server's form, where it would read as that form's outcome.
    pub notice_server: Option<String>,
    /// What is drawn over the form.
    pub overlay: Overlay,
    /// Whether the broker has this front-end registered, or why not.
    pub link: Result<(), String>,
    /// Forms queued behind the presented one, per session.
    pub backlog: std::collections::HashMap<String, usize>,
    /// Lines a URL form's message is scrolled by (its consent is pinned
    /// below it).
    pub scroll: usize,
    /// The most it can be scrolled, as last drawn.
    pub scroll_max: std::cell::Cell<usize>,
}

impl Default for App {
    fn default() -> Self {
        App {
            entries: Vec::new(),
            selected: 0,
            notice: None,
            notice_server: None,
            overlay: Overlay::None,
            link: Err("connecting to elicitd".into()),
            backlog: Default::default(),
            scroll: 0,
            scroll_max: Default::default(),
        }
    }
}

impl App {
    /// The notice to show now, if any (see [`App::notice_server`]).
    pub fn visible_notice(&self) -> Option<&str> {
        let notice = self.notice.as_deref()?;
        match (&self.notice_server, self.current()) {
            (Some(server), Some(entry)) if entry.server() != *server => None,
            _ => Some(notice),
        }
    }

    /// The entry being answered.
    pub fn current(&self) -> Option<&Entry> {
        self.entries.get(self.selected)
    }

    fn current_mut(&mut self) -> Option<&mut Entry> {
        self.entries.get_mut(self.selected)
    }

    /// The broker presents a form (again, if it was shown before).
    pub fn show(&mut self, show: ShowRequest) {
        let entry = Entry::new(show);
        match self.entries.iter_mut().find(|e| e.form == entry.form) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// The broker withdraws a form.
    pub fn withdraw(&mut self, form: &str, reason: &str) {
        if let Some(entry) = self.remove(form) {
            self.notice_server = None;
            self.notice = Some(withdrawn_text(&entry, reason));
        }
    }

    /// (Re-)registered with the broker. Forms are not cleared here: the
    /// broker may show its queued forms before the registration's reply
    /// arrives; stale ones were cleared when the broker went away.
    pub fn registered(&mut self) {
        self.link = Ok(());
    }

    /// The broker is gone: its tokens are void.
    pub fn broker_gone(&mut self, why: String) {
        self.entries.clear();
        self.selected = 0;
        self.overlay = Overlay::None;
        self.link = Err(why);
    }

    /// The broker's reply to an answer.
    pub fn answered(&mut self, form: &str, action: &ElicitationAction, result: Result<(), Error>) {
        match result {
            Ok(()) => {
                if let Some(entry) = self.remove(form) {
                    self.notice = Some(sent_text(&entry, action));
                    self.notice_server = Some(entry.server());
                }
            }
            Err(Error::InvalidAnswer(json)) => {
                if let Some(entry) = self.entries.iter_mut().find(|e| e.form == form) {
                    entry.sending = false;
                    entry.status = Some(tr("elicitd refused the answer; see the marked fields."));
                    if let Body::Form(model) = &mut entry.body {
                        model.apply_server_errors(&elicit_form::parse_field_errors(&json));
                    }
                }
            }
            // The broker is unreachable: keep the form, the user may retry.
            Err(error) if error.broker_unreachable() => {
                if let Some(entry) = self.entries.iter_mut().find(|e| e.form == form) {
                    entry.sending = false;
                    entry.status = Some(fill(
                        &tr("Could not reach elicitd: {error}"),
                        &[("error", &error)],
                    ));
                }
            }
            // The form is gone or no longer ours: nothing to answer any more.
            Err(error) => {
                if let Some(entry) = self.remove(form) {
                    let text = tr("The answer to {server} was not taken: {error}");
                    self.notice = Some(fill(&text, &[("server", &entry.server()), ("error", &error)]));
                    self.notice_server = None;
                }
            }
        }
    }

    /// A line about form `form` (the browser failed to start…).
    pub fn set_status(&mut self, form: &str, status: String) {
        if let Some(entry) = self.entries.iter_mut().find(|e| e.form == form) {
            entry.status = Some(status);
        }
    }

    fn remove(&mut self, form: &str) -> Option<Entry> {
        let index = self.entries.iter().position(|e| e.form == form)?;
        let entry = self.entries.remove(index);
        if index < self.selected || self.selected >= self.entries.len() {
            self.selected = self.selected.saturating_sub(1);
        }
        if index == self.selected || self.entries.is_empty() {
            self.overlay = Overlay::None;
            // Another form is current now: its message starts at the top.
            self.scroll = 0;
        }
        Some(entry)
    }

    /// Handles one key; returns what the program must do, if anything.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<Command> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('q')) {
            return Some(Command::Quit);
        }
        // A plain `q` quits only with nothing on screen, where it cannot be
        // meant as text or as an answer.
        if self.entries.is_empty() && self.overlay == Overlay::None && key.code == KeyCode::Char('q') {
            return Some(Command::Quit);
        }
        match self.overlay {
            Overlay::Help => {
                self.overlay = Overlay::None;
                return None;
            }
            Overlay::ConfirmOpen => return self.on_confirm_key(key),
            Overlay::None => {}
        }
        match key.code {
            KeyCode::F(1) => {
                self.overlay = Overlay::Help;
                return None;
            }
            KeyCode::PageDown => return self.switch(1),
            KeyCode::PageUp => return self.switch(-1),
            KeyCode::Char('n') if ctrl => return self.switch(1),
            KeyCode::Char('p') if ctrl => return self.switch(-1),
            _ => {}
        }
        let entry = self.current_mut()?;
        if entry.sending {
            return None;
        }
        entry.status = None;
        let form = entry.form.clone();
        let token = entry.token.clone();
        let answer = |answer| Some(Command::Answer { form, token, answer });
        match key.code {
            KeyCode::Esc => return answer(FormModel::cancel()),
            KeyCode::Char('d') if ctrl => return answer(FormModel::decline()),
            _ => {}
        }
        match &mut entry.body {
            Body::Form(model) => {
                let typing = matches!(
                    model.field(model.focus()).map(|f| f.input()),
                    Some(Input::Text(_))
                );
                if !typing && key.code == KeyCode::Char('?') {
                    self.overlay = Overlay::Help;
                    return None;
                }
                if !typing && key.code == KeyCode::Char('d') {
                    return answer(FormModel::decline());
                }
                if key.code == KeyCode::Enter {
                    return match model.submit() {
                        Ok(accept) => answer(accept),
                        Err(errors) => {
                            let n = errors.len();
                            entry.status = Some(trn(
                                "{n} problem to fix before sending.",
                                "{n} problems to fix before sending.",
                                n,
                            ));
                            None
                        }
                    };
                }
                edit::edit(model, key);
                None
            }
            Body::Url(_) => match key.code {
                KeyCode::Enter | KeyCode::Char('o') => {
                    self.overlay = Overlay::ConfirmOpen;
                    None
                }
                KeyCode::Char('d') => answer(FormModel::decline()),
                KeyCode::Char('?') => {
                    self.overlay = Overlay::Help;
                    None
                }
                KeyCode::Up => {
                    self.scroll = self.scroll.min(self.scroll_max.get()).saturating_sub(1);
                    None
                }
                KeyCode::Down => {
                    self.scroll = (self.scroll + 1).min(self.scroll_max.get());
                    None
                }
                _ => None,
            },
            Body::Unreadable(_) => match key.code {
                KeyCode::Char('d') => answer(FormModel::decline()),
                KeyCode::Char('?') => {
                    self.overlay = Overlay::Help;
                    None
                }
                _ => None,
            },
        }
    }

    fn on_confirm_key(&mut self, key: KeyEvent) -> Option<Command> {
        self.overlay = Overlay::None;
        if !matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
            return None;
        }
        let entry = self.current()?;
        let Body::Url(view) = &entry.body else {
            return None;
        };
        Some(Command::OpenUrl {
            form: entry.form.clone(),
            token: entry.token.clone(),
            url: view.full.clone(),
        })
    }

    fn switch(&mut self, step: isize) -> Option<Command> {
        self.scroll = 0;
        let n = self.entries.len() as isize;
        if n > 0 {
            self.selected = (self.selected as isize + step).rem_euclid(n) as usize;
        }
        None
    }

    /// Marks form `form` as being sent.
    pub fn sending(&mut self, form: &str) {
        if let Some(entry) = self.entries.iter_mut().find(|e| e.form == form) {
            entry.sending = true;
        }
    }
}

/// "Sent to SERVER: accepted." (declined, cancelled).
pub fn sent_text(entry: &Entry, action: &ElicitationAction) -> String {
    let template = match action {
        ElicitationAction::Accept => tr("Sent to {server}: accepted."),
        ElicitationAction::Decline => tr("Sent to {server}: declined."),
        _ => tr("Sent to {server}: cancelled."),
    };
    fill(&template, &[("server", &entry.server())])
}

/// "The form from SERVER was withdrawn: REASON."
pub fn withdrawn_text(entry: &Entry, reason: &str) -> String {
    let reason = reason_text(reason);
    fill(
        &tr("The form from {server} was withdrawn: {reason}."),
        &[("server", &entry.server()), ("reason", &reason)],
    )
}
