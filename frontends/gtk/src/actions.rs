//! What the buttons and keys do: accept (checked first), decline, cancel,
//! open the URL, dismiss a notice.

use std::rc::Rc;

use elicit_form::FormModel;
use elicit_proto::Answer;
use gtk::glib;

use crate::bus::Command;
use crate::queue::Body;
use crate::window::{NOTICE_TIME, Ui};

impl Ui {
    /// Accept: checks the form, sends it, or shows what to fix.
    pub(crate) fn accept(self: &Rc<Self>) {
        if let Ok(shown) = self.shown.try_borrow()
            && let Some((_, Some(fields))) = &*shown
        {
            fields.commit_pending();
        }
        let mut focus_error = None;
        let command = {
            let mut state = self.state.borrow_mut();
            let Some(entry) = state.current_mut() else { return };
            if entry.sending {
                return;
            }
            let form = entry.form.clone();
            let token = entry.token.clone();
            let Some(model) = entry.model_mut() else { return };
            match model.submit() {
                Ok(answer) => Some(Command::Answer { form, token, answer }),
                Err(errors) => {
                    focus_error = Some(model.focus());
                    let count = errors.len();
                    entry.status = Some(elicit_i18n::trn(
                        "{n} problem to fix before sending.",
                        "{n} problems to fix before sending.",
                        count,
                    ));
                    None
                }
            }
        };
        match command {
            Some(command) => self.send(command),
            None => {
                self.render();
                if let (Some(index), Some((_, Some(fields)))) = (focus_error, &*self.shown.borrow()) {
                    fields.focus(index);
                }
            }
        }
    }

    /// Decline or cancel the shown form.
    pub(crate) fn answer_bare(self: &Rc<Self>, answer: Answer) {
        let command = {
            let state = self.state.borrow();
            let Some(entry) = state.current() else { return };
            if entry.sending {
                return;
            }
            Command::Answer {
                form: entry.form.clone(),
                token: entry.token.clone(),
                answer,
            }
        };
        self.send(command);
    }

    /// "Open in browser": the only way a URL is ever opened.
    pub(crate) fn open_url(self: &Rc<Self>) {
        let command = {
            let state = self.state.borrow();
            let Some(entry) = state.current() else { return };
            let Body::Url(view) = &entry.body else { return };
            if entry.sending {
                return;
            }
            Command::OpenUrl {
                form: entry.form.clone(),
                token: entry.token.clone(),
                url: view.full.clone(),
            }
        };
        self.send(command);
    }

    /// Hands `command` to the bus side and marks its form as being sent.
    pub(crate) fn send(self: &Rc<Self>, command: Command) {
        let form = command.form().map(str::to_owned);
        if self.commands.try_send(command).is_err() {
            // The bus side has ended; the fatal event says why.
            return;
        }
        if let Some(form) = form {
            self.state.borrow_mut().sending(&form);
        }
        self.render();
    }

    pub(crate) fn escape(self: &Rc<Self>) {
        let has_form = self.state.borrow().current().is_some();
        if has_form {
            self.answer_bare(FormModel::cancel());
        } else {
            self.dismiss_notice();
        }
    }

    pub(crate) fn dismiss_notice(self: &Rc<Self>) {
        self.state.borrow_mut().clear_notice();
        self.render();
    }

    pub(crate) fn start_notice_timer(self: &Rc<Self>) {
        if self.notice_timer.borrow().is_some() {
            return;
        }
        let ui = Rc::downgrade(self);
        let id = glib::timeout_add_local_once(NOTICE_TIME, move || {
            if let Some(ui) = ui.upgrade() {
                ui.notice_timer.borrow_mut().take();
                ui.dismiss_notice();
            }
        });
        *self.notice_timer.borrow_mut() = Some(id);
    }

    pub(crate) fn stop_notice_timer(&self) {
        if let Some(id) = self.notice_timer.borrow_mut().take() {
            id.remove();
        }
    }
}
