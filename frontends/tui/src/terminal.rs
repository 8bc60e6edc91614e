//! The full-screen interface: terminal set-up and the event loop.

use std::io;
use std::path::Path;
use std::time::Duration;

use elicit_proto::{ElicitationAction, Error};
use ratatui::crossterm::event::{self, Event};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::app::{App, Command};
use crate::bus::{BusEvent, Link};
use crate::entry::now_ms;
use crate::opener;
use crate::ui::{self, theme::Theme};

/// What wakes the event loop.
enum Wake {
    Terminal(Event),
    Bus(BusEvent),
    Answered {
        form: String,
        action: ElicitationAction,
        result: Result<(), Error>,
    },
    Tick,
    Closed,
}

/// Runs the full-screen interface until the user quits.
pub async fn run(link: Link, mut inbox: UnboundedReceiver<BusEvent>, opener: &Path) -> io::Result<()> {
    let mut terminal = ratatui::try_init()?;
    let (keys_tx, mut keys) = unbounded_channel();
    // crossterm's reader blocks; a thread of its own keeps the runtime free.
    std::thread::spawn(move || {
        while let Ok(event) = event::read() {
            if keys_tx.send(event).is_err() {
                break;
            }
        }
    });
    let (answers_tx, mut answers) = unbounded_channel();
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    let mut app = App::default();
    let theme = Theme::from_env();
    let result = loop {
        if let Err(error) = terminal.draw(|frame| ui::draw(frame, &app, theme, now_ms())) {
            break Err(error);
        }
        let wake = tokio::select! {
            event = keys.recv() => event.map_or(Wake::Closed, Wake::Terminal),
            event = inbox.recv() => event.map_or(Wake::Closed, Wake::Bus),
            Some(answered) = answers.recv() => answered,
            _ = ticks.tick() => Wake::Tick,
        };
        let command = match wake {
            Wake::Terminal(Event::Key(key)) => app.on_key(key),
            // A resize, focus or paste event: the next draw adapts.
            Wake::Terminal(_) | Wake::Tick => None,
            Wake::Bus(event) => {
                apply(&mut app, event);
                None
            }
            Wake::Answered { form, action, result } => {
                app.answered(&form, &action, result);
                None
            }
            Wake::Closed => break Ok(()),
        };
        match command {
            Some(Command::Quit) => break Ok(()),
            Some(command) => execute(&mut app, command, &link, &answers_tx, opener),
            None => {}
        }
    };
    ratatui::restore();
    result
}

/// Applies a bus event to the state.
pub fn apply(app: &mut App, event: BusEvent) {
    match event {
        BusEvent::Show(show) => app.show(*show),
        BusEvent::Withdraw { form, reason } => app.withdraw(&form, &reason),
        BusEvent::Registered => app.registered(),
        BusEvent::BrokerGone(why) => app.broker_gone(why),
        BusEvent::Backlog(backlog) => app.backlog = backlog,
    }
}

fn execute(app: &mut App, command: Command, link: &Link, answers: &UnboundedSender<Wake>, opener: &Path) {
    let (form, token, answer) = match command {
        Command::Answer { form, token, answer } => (form, token, answer),
        Command::OpenUrl { form, token, url } => {
            if let Err(error) = opener::open(opener, &url) {
                app.set_status(&form, opener::failed(opener, &error));
                return;
            }
            (form, token, elicit_proto::Answer::bare(ElicitationAction::Accept))
        }
        Command::Quit => return,
    };
    app.sending(&form);
    let link = link.clone();
    let answers = answers.clone();
    tokio::spawn(async move {
        let result = link.answer(&form, &token, &answer).await;
        let _ = answers.send(Wake::Answered {
            form,
            action: answer.action,
            result,
        });
    });
}
