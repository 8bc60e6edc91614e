//! The application: GTK on the main thread, the window made on activate,
//! bus events fed to it from the GLib main loop, SIGINT and SIGTERM to end.

use std::cell::Cell;
use std::rc::Rc;

use async_channel::{Receiver, Sender};
use gtk::prelude::*;
use gtk::{gio, glib};

use crate::bus::{BusEvent, Command};
use crate::window::Ui;

/// The application id (desktop file, portal requests).
pub const APP_ID: &str = "dev.elicitd.Gtk";

/// Runs the GTK main loop on this thread until SIGINT or SIGTERM (or a
/// fatal bus error); `events` come from the bus, `commands` go to it.
/// Returns whether it ended well.
pub fn run(events: Receiver<BusEvent>, commands: Sender<Command>) -> bool {
    let app = gtk::Application::builder()
        .application_id(APP_ID)
        .flags(gio::ApplicationFlags::NON_UNIQUE)
        .build();
    let ok = Rc::new(Cell::new(true));
    let result = ok.clone();
    app.connect_activate(move |app| {
        let ui = Ui::new(app, commands.clone());
        let ok = ok.clone();
        let events = events.clone();
        glib::MainContext::default().spawn_local(async move {
            while let Ok(event) = events.recv().await {
                if let BusEvent::AlreadyRunning = event {
                    eprintln!("elicit-gtk: another elicit-gtk runs already; it shows the forms");
                    ui.quit();
                    return;
                }
                if let BusEvent::Fatal(error) = event {
                    eprintln!("elicit-gtk: {error}");
                    ok.set(false);
                    ui.quit();
                    return;
                }
                ui.apply(event);
            }
        });
    });
    for signal in [SIGINT, SIGTERM] {
        let app = app.clone();
        glib::unix_signal_add_local(signal, move || {
            app.quit();
            glib::ControlFlow::Continue
        });
    }
    // GTK's own arguments are not ours: clap has read the command line.
    let status = app.run_with_args::<&str>(&[]);
    result.get() && status == glib::ExitCode::SUCCESS
}

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;
