//! The window's inputs: its buttons, Escape and the close button, each
//! wired to the action it stands for.

use std::rc::Rc;

use elicit_form::FormModel;
use gtk::prelude::*;
use gtk::{gdk, glib};

use crate::window::Ui;

impl Ui {
    /// Wires the buttons, Escape and the close button.
    pub(crate) fn connect(self: &Rc<Self>) {
        let ui = self.clone();
        self.accept.connect_clicked(move |_| ui.accept());
        let ui = self.clone();
        self.decline
            .connect_clicked(move |_| ui.answer_bare(FormModel::decline()));
        let ui = self.clone();
        self.cancel
            .connect_clicked(move |_| ui.answer_bare(FormModel::cancel()));
        let ui = self.clone();
        self.open.connect_clicked(move |_| ui.open_url());
        let ui = self.clone();
        self.close.connect_clicked(move |_| ui.dismiss_notice());
        let ui = self.clone();
        self.banner.connect_response(move |_, response| {
            if response == gtk::ResponseType::Close {
                ui.dismiss_notice();
            }
        });
        // Escape cancels the shown form (or closes a lone notice); the
        // window's close button does the same: a dialog closed unanswered
        // is a cancel, as MCP defines it.
        let keys = gtk::EventControllerKey::new();
        let ui = self.clone();
        keys.connect_key_pressed(move |_, key, _, modifiers| {
            if key == gdk::Key::Escape && modifiers.is_empty() {
                ui.escape();
                glib::Propagation::Stop
            } else {
                glib::Propagation::Proceed
            }
        });
        self.window.add_controller(keys);
        let ui = self.clone();
        self.window.connect_close_request(move |_| {
            ui.escape();
            glib::Propagation::Stop
        });
    }
}
