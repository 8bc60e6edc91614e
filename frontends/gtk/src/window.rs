//! The one window: the shown form with its buttons, the "N more waiting"
//! count, and the banner that says why a form went away. It turns the
//! queue's state into widgets and the user's clicks into commands.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use async_channel::Sender;
use elicit_form::FormModel;
use elicit_i18n::{fill, tr, trn};
use gtk::prelude::*;
use gtk::{gio, glib};

use elicit_link::LinkEvent;

use crate::bus::{BusEvent, Command};
use crate::fields::{Change, Editor, FieldsView, Mnemonics};
use crate::queue::{Body, Queue};

/// How long a notice with no form behind it stays before the window hides.
pub(crate) const NOTICE_TIME: Duration = Duration::from_secs(8);

/// The window's width until the user changes it.
const DEFAULT_WIDTH: i32 = 520;

/// The tallest the page gets before it scrolls.
const MAX_PAGE_HEIGHT: i32 = 560;

/// The window and what it shows.
pub(crate) struct Ui {
    pub(crate) app: gtk::Application,
    pub(crate) window: gtk::ApplicationWindow,
    pub(crate) title: gtk::Label,
    /// The asker's icon (`elicit ask --icon`), beside the title.
    pub(crate) icon: gtk::Image,
    pub(crate) waiting: gtk::Label,
    pub(crate) banner: gtk::InfoBar,
    pub(crate) banner_text: gtk::Label,
    pub(crate) message: gtk::Label,
    pub(crate) required_note: gtk::Label,
    pub(crate) body: gtk::Box,
    /// A URL form's consent (the address, its host, the warnings), pinned
    /// under the scrolled page: a long message, which the server writes
    /// and may make imitate it, cannot push it out of view.
    pub(crate) pinned: gtk::Box,
    /// The scrolled page holding the message and the body.
    pub(crate) scroller: gtk::ScrolledWindow,
    pub(crate) content: gtk::Box,
    pub(crate) status: gtk::Label,
    pub(crate) accept: gtk::Button,
    pub(crate) decline: gtk::Button,
    pub(crate) cancel: gtk::Button,
    pub(crate) open: gtk::Button,
    pub(crate) close: gtk::Button,
    /// The letters the buttons' mnemonics use (in the user's language);
    /// fields get the others.
    pub(crate) button_letters: String,
    pub(crate) state: RefCell<Queue>,
    /// The presentation token of the form whose widgets are built (a form
    /// presented again gets new widgets), and its fields.
    pub(crate) shown: RefCell<Option<(String, Option<FieldsView>)>>,
    pub(crate) commands: Sender<Command>,
    pub(crate) notice_timer: RefCell<Option<glib::SourceId>>,
    /// Keeps the application running while the window is hidden.
    pub(crate) hold: RefCell<Option<gio::ApplicationHoldGuard>>,
}

impl Ui {
    pub(crate) fn new(app: &gtk::Application, commands: Sender<Command>) -> Rc<Ui> {
        let (width, height) = crate::geometry::load().unwrap_or((DEFAULT_WIDTH, -1));
        let window = gtk::ApplicationWindow::builder()
            .application(app)
            .title("elicitd")
            .default_width(width)
            .default_height(height)
            .build();
        // GTK has mirrored the default direction for a right-to-left
        // locale already (from its own catalogue's "default:LTR"); nothing
        // below sets a direction, so every box and label follows it.
        let title = gtk::Label::new(Some("elicitd"));
        title.add_css_class("title");
        let waiting = gtk::Label::new(None);
        waiting.add_css_class("subtitle");
        waiting.set_visible(false);
        let heading = gtk::Box::new(gtk::Orientation::Vertical, 0);
        heading.set_valign(gtk::Align::Center);
        heading.append(&title);
        heading.append(&waiting);
        let icon = gtk::Image::new();
        icon.set_pixel_size(24);
        icon.set_visible(false);
        let header = gtk::HeaderBar::new();
        header.pack_start(&icon);
        header.set_title_widget(Some(&heading));
        window.set_titlebar(Some(&header));

        let banner = gtk::InfoBar::new();
        banner.set_message_type(gtk::MessageType::Info);
        banner.set_show_close_button(true);
        let banner_text = gtk::Label::new(None);
        banner_text.set_wrap(true);
        banner_text.set_xalign(0.0);
        banner.add_child(&banner_text);
        banner.set_revealed(false);

        let message = label_line();
        message.add_css_class("title-4");
        let required_note = label_line();
        required_note.set_text(&tr("Fields marked * are required."));
        required_note.add_css_class("dim-label");
        let body = gtk::Box::new(gtk::Orientation::Vertical, 0);
        let status = label_line();
        status.add_css_class("error");
        let content = gtk::Box::new(gtk::Orientation::Vertical, 12);
        content.set_margin_top(18);
        content.set_margin_bottom(18);
        content.set_margin_start(18);
        content.set_margin_end(18);
        content.append(&message);
        content.append(&required_note);
        content.append(&body);
        // Classic scrollbars, not overlay ones that show only while the
        // pointer moves: a form taller than the window shows at once that
        // more fields are below (13 fields with 6 in view looked complete).
        let scroller = gtk::ScrolledWindow::builder()
            .hscrollbar_policy(gtk::PolicyType::Never)
            .overlay_scrolling(false)
            .propagate_natural_height(true)
            .max_content_height(MAX_PAGE_HEIGHT)
            .vexpand(true)
            .child(&content)
            .build();

        // TRANSLATORS: the underscore marks the Alt+letter key; the five
        // buttons need five different letters.
        let labels = [
            tr("_Cancel"),
            tr("_Decline"),
            tr("_Accept"),
            tr("_Open in browser"),
            tr("C_lose"),
        ];
        let [cancel, decline, accept, open, close] = labels.each_ref().map(|l| gtk::Button::with_mnemonic(l));
        let button_letters = Mnemonics::letters_of(&labels.each_ref().map(String::as_str));
        accept.add_css_class("suggested-action");
        open.add_css_class("suggested-action");
        let buttons = gtk::Box::new(gtk::Orientation::Horizontal, 8);
        buttons.set_halign(gtk::Align::End);
        for button in [&close, &cancel, &decline, &accept, &open] {
            // GTK 4.8 puts the mnemonic's underscore into the accessible
            // name; without it the button is named by its label.
            button.reset_property(gtk::AccessibleProperty::Label);
            buttons.append(button);
        }
        let footer = gtk::Box::new(gtk::Orientation::Vertical, 8);
        footer.set_margin_start(18);
        footer.set_margin_end(18);
        footer.set_margin_bottom(18);
        let pinned = gtk::Box::new(gtk::Orientation::Vertical, 0);
        footer.append(&pinned);
        footer.append(&status);
        footer.append(&buttons);

        let page = gtk::Box::new(gtk::Orientation::Vertical, 0);
        page.append(&banner);
        page.append(&scroller);
        page.append(&footer);
        window.set_child(Some(&page));

        let ui = Rc::new(Ui {
            app: app.clone(),
            window,
            title,
            icon,
            waiting,
            banner,
            banner_text,
            message,
            required_note,
            body,
            pinned,
            scroller,
            content,
            status,
            accept,
            decline,
            cancel,
            open,
            close,
            button_letters,
            state: RefCell::new(Queue::default()),
            shown: RefCell::new(None),
            commands,
            notice_timer: RefCell::new(None),
            hold: RefCell::new(Some(app.hold())),
        });
        ui.connect();
        ui.render();
        ui
    }

    /// Ends the program.
    pub(crate) fn quit(&self) {
        self.hide();
        self.hold.borrow_mut().take();
        self.app.quit();
    }

    /// Applies a bus event, then redraws.
    pub(crate) fn apply(self: &Rc<Self>, event: BusEvent) {
        let mut raise = false;
        {
            let mut state = self.state.borrow_mut();
            match event {
                BusEvent::Link(LinkEvent::Show(show)) => state.show(*show),
                BusEvent::Link(LinkEvent::Withdraw { form, reason }) => state.withdraw(&form, &reason),
                BusEvent::Link(LinkEvent::Registered) => eprintln!("elicit-gtk: registered with elicitd"),
                BusEvent::Link(LinkEvent::BrokerGone(why)) => {
                    eprintln!("elicit-gtk: {why}");
                    state.broker_gone(why);
                }
                BusEvent::Link(LinkEvent::Backlog(backlog)) => state.set_backlog(backlog),
                BusEvent::Answered { form, result, .. } => state.answered(&form, result),
                BusEvent::PreferDark(dark) => {
                    if let Some(settings) = gtk::Settings::default() {
                        settings.set_gtk_application_prefer_dark_theme(dark);
                    }
                }
                BusEvent::Open(form) => raise = state.promote(&form),
                BusEvent::Fatal(_) | BusEvent::AlreadyRunning => {}
            }
        }
        self.render();
        if raise {
            self.window.present();
        }
    }

    /// Makes the widgets show the state: the first form, or a lone notice,
    /// or nothing (the window hides).
    pub(crate) fn render(self: &Rc<Self>) {
        let mut focus_first = false;
        {
            let state = self.state.borrow();
            let notice = state.notice().map(str::to_owned);
            self.banner_text.set_text(notice.as_deref().unwrap_or(""));
            self.banner.set_revealed(notice.is_some());
            self.banner.set_visible(notice.is_some());
            let waiting = state.waiting();
            self.waiting
                .set_text(&trn("{n} more waiting", "{n} more waiting", waiting));
            self.waiting.set_visible(waiting > 0);
            match state.current() {
                Some(entry) => {
                    self.stop_notice_timer();
                    let title = crate::queue::title(entry);
                    self.window.set_title(Some(&title));
                    self.title.set_text(&title);
                    let icon = entry.origin.icon_name();
                    self.icon.set_icon_name(icon);
                    self.icon.set_visible(icon.is_some());
                    if icon.is_some() {
                        // TRANSLATORS: the accessible name of the asker's icon.
                        let name = fill(&tr("Icon of {server}"), &[("server", &entry.server())]);
                        self.icon
                            .update_property(&[gtk::accessible::Property::Label(&name)]);
                    }
                    let rebuilt = self
                        .shown
                        .borrow()
                        .as_ref()
                        .is_none_or(|(token, _)| *token != entry.token);
                    if rebuilt {
                        self.rebuild(entry);
                        focus_first = true;
                    }
                    if let (Some((_, Some(fields))), Some(model)) = (&*self.shown.borrow(), entry.model()) {
                        fields.refresh(model);
                    }
                    let form_errors = entry.model().map(FormModel::form_errors).unwrap_or_default();
                    let status = entry
                        .status
                        .iter()
                        .cloned()
                        .chain(form_errors)
                        .collect::<Vec<_>>()
                        .join("\n");
                    self.status.set_text(&status);
                    self.status.set_visible(!status.is_empty());
                    self.body.set_sensitive(!entry.sending);
                    self.pinned.set_sensitive(!entry.sending);
                    for button in [&self.accept, &self.decline, &self.cancel, &self.open] {
                        button.set_sensitive(!entry.sending);
                    }
                    if !self.window.is_visible() {
                        self.window.present();
                    }
                }
                None => {
                    self.clear_body();
                    self.icon.set_visible(false);
                    if notice.is_some() {
                        self.title.set_text("elicitd");
                        self.window.set_title(Some("elicitd"));
                        self.message.set_text(&tr("Nothing is waiting for an answer."));
                        self.required_note.set_visible(false);
                        self.status.set_visible(false);
                        for button in [&self.accept, &self.decline, &self.cancel, &self.open] {
                            button.set_visible(false);
                        }
                        self.close.set_visible(true);
                        self.window.set_default_widget(Some(&self.close));
                        if self.window.is_visible() {
                            self.start_notice_timer();
                        }
                    } else {
                        self.stop_notice_timer();
                        self.hide();
                    }
                }
            }
        }
        if focus_first {
            self.focus_start();
        }
    }

    /// Builds the widgets of `entry`, replacing the last form's.
    fn rebuild(self: &Rc<Self>, entry: &crate::queue::Entry) {
        self.clear_body();
        self.message.set_text(&entry.message);
        self.message.set_visible(!entry.message.is_empty());
        let url_mode = matches!(entry.body, Body::Url(_));
        let mut fields = None;
        match &entry.body {
            Body::Form(model) => {
                let mut mnemonics = Mnemonics::reserving(&self.button_letters);
                let editor = self.editor(&entry.form, &entry.token);
                let view = FieldsView::build(model, &mut mnemonics, &editor);
                self.body.append(view.widget());
                self.required_note
                    .set_visible(model.fields().iter().any(|f| f.field().required));
                fields = Some(view);
            }
            Body::Url(view) => {
                self.required_note.set_visible(false);
                self.pinned.append(&crate::url::build(view));
            }
            Body::Unreadable(why) => {
                self.required_note.set_visible(false);
                let label = label_line();
                label.set_text(&fill(
                    &tr("This request cannot be shown here ({why}). You can decline or cancel it."),
                    &[("why", why)],
                ));
                self.body.append(&label);
            }
        }
        self.accept.set_visible(matches!(entry.body, Body::Form(_)));
        self.open.set_visible(url_mode);
        self.decline.set_visible(true);
        self.cancel.set_visible(true);
        self.close.set_visible(false);
        // Enter accepts a form. A URL opens only on a click (or its
        // mnemonic): Enter meant for another window must never open it.
        if matches!(entry.body, Body::Form(_)) {
            self.window.set_default_widget(Some(&self.accept));
        } else {
            self.window.set_default_widget(None::<&gtk::Widget>);
        }
        *self.shown.borrow_mut() = Some((entry.token.clone(), fields));
        self.fit_height();
    }

    /// Makes the page as tall as the form needs at the window's width, up
    /// to a limit (then it scrolls). A scrolled window's own guess measures
    /// wrapping labels unwrapped, and cut short forms off.
    fn fit_height(&self) {
        let width = match self.window.width() {
            0 => DEFAULT_WIDTH,
            width => width,
        };
        let (_, natural, _, _) = self.content.measure(gtk::Orientation::Vertical, width);
        self.scroller.set_min_content_height(natural.min(MAX_PAGE_HEIGHT));
    }

    /// Hides the window, remembering its size for the next time (GTK 4
    /// keeps the default size at the size the user resized it to, without
    /// the shadows of client-side decorations that `width()` includes).
    fn hide(&self) {
        if self.window.is_visible() {
            crate::geometry::save(self.window.default_size());
        }
        self.window.set_visible(false);
    }

    fn clear_body(&self) {
        while let Some(child) = self.body.first_child() {
            self.body.remove(&child);
        }
        while let Some(child) = self.pinned.first_child() {
            self.pinned.remove(&child);
        }
        self.shown.borrow_mut().take();
    }

    /// Focuses where the user starts: the first field; Accept for a
    /// confirmation (Enter accepts); the address in URL mode, where Enter
    /// does nothing; Cancel for a request that cannot be shown.
    fn focus_start(&self) {
        let (fields, url) = match self.state.borrow().current().map(|e| &e.body) {
            Some(Body::Form(model)) => (model.fields().len(), false),
            Some(Body::Url(_)) => (0, true),
            _ => (0, false),
        };
        // The state is not borrowed while focusing: a field's focus
        // handler edits the model.
        let shown = self.shown.borrow();
        match &*shown {
            Some((_, Some(view))) if fields > 0 => view.focus(0),
            Some((_, Some(_))) => {
                self.accept.grab_focus();
            }
            _ if url => {
                self.pinned.child_focus(gtk::DirectionType::TabForward);
                // A focused selectable label selects all of itself, which
                // would hide the bold host under the selection.
                if let Some(label) = gtk::prelude::GtkWindowExt::focus(&self.window)
                    .and_then(|w| w.downcast::<gtk::Label>().ok())
                {
                    label.select_region(0, 0);
                }
            }
            _ => {
                self.cancel.grab_focus();
            }
        }
    }

    /// The editor for the fields of form `form` as presented with `token`:
    /// edits its model (if it is still here) and refreshes the errors.
    fn editor(self: &Rc<Self>, form: &str, token: &str) -> Editor {
        let ui = Rc::downgrade(self);
        let form = form.to_owned();
        let token = token.to_owned();
        Rc::new(move |change: Change, edit: &mut dyn FnMut(&mut FormModel)| {
            let Some(ui) = ui.upgrade() else { return };
            // A signal raised while the state is being changed is the
            // program's own doing, not the user's.
            let Ok(mut state) = ui.state.try_borrow_mut() else {
                return;
            };
            let Some(entry) = state.get_mut(&form).filter(|e| e.token == token) else {
                return;
            };
            // What the status said was about the answer as it was.
            if change == Change::Value {
                entry.status = None;
            }
            let Some(model) = entry.model_mut() else { return };
            edit(model);
            if let Ok(shown) = ui.shown.try_borrow()
                && let Some((shown_token, Some(fields))) = &*shown
                && *shown_token == token
            {
                fields.refresh(model);
            }
            let form_errors = model.form_errors();
            let status: Vec<String> = entry.status.iter().cloned().chain(form_errors).collect();
            ui.status.set_text(&status.join("\n"));
            ui.status.set_visible(!status.is_empty());
        })
    }
}

/// A left-aligned wrapping label.
fn label_line() -> gtk::Label {
    let label = gtk::Label::new(None);
    label.set_xalign(0.0);
    label.set_wrap(true);
    label
}
