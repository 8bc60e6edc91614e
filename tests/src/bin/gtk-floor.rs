//! `gtk-floor`: the floor of `elicit-bench`'s window figures. An empty GTK
//! 4 window, the toolkit elicit-gtk uses, mapped by a process that already
//! runs: a line `show` on standard input presents it, `hide` hides it, and
//! the end of input ends the program. Whatever elicit-gtk adds to a form's
//! way onto the screen is the figure minus this.

use std::io::BufRead;

use gtk::glib;
use gtk::prelude::*;

fn main() -> glib::ExitCode {
    let app = gtk::Application::builder()
        .application_id("dev.elicitd.BenchFloor")
        .flags(gtk::gio::ApplicationFlags::NON_UNIQUE)
        .build();
    app.connect_activate(|app| {
        let window = gtk::ApplicationWindow::builder()
            .application(app)
            .title("gtk-floor")
            .default_width(400)
            .default_height(300)
            .build();
        let (lines_tx, lines) = async_channel::unbounded::<String>();
        // Standard input is read on a thread of its own: GTK owns this one.
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if lines_tx.send_blocking(line).is_err() {
                    break;
                }
            }
        });
        let app = app.clone();
        let hold = app.hold();
        glib::MainContext::default().spawn_local(async move {
            while let Ok(line) = lines.recv().await {
                match line.trim() {
                    "show" => window.present(),
                    "hide" => window.set_visible(false),
                    _ => {}
                }
            }
            drop(hold);
            app.quit();
        });
    });
    app.run_with_args::<&str>(&[])
}
