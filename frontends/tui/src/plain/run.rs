//! The conversation on standard input and output, wired to the bus.

use std::io;
use std::path::Path;

use elicit_proto::{Answer, ElicitationAction, Error};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Plain;
use crate::app::Command;
use crate::bus::{BusEvent, Link};
use crate::opener;

/// Runs the line-by-line conversation on standard input and output.
pub async fn run(link: Link, mut inbox: UnboundedReceiver<BusEvent>, opener: &Path) -> io::Result<()> {
    let mut plain = Plain::new(io::stdout());
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let (answers_tx, mut answers) =
        tokio::sync::mpsc::unbounded_channel::<(String, ElicitationAction, Result<(), Error>)>();
    loop {
        let command = tokio::select! {
            event = inbox.recv() => match event {
                Some(event) => {
                    plain.on_bus(event)?;
                    None
                }
                None => return Ok(()),
            },
            line = lines.next_line() => match line? {
                Some(line) => plain.on_line(&line)?,
                // End of input: the user is gone.
                None => return Ok(()),
            },
            Some((form, action, result)) = answers.recv() => {
                plain.on_answered(&form, &action, result)?;
                None
            }
        };
        let (form, token, answer) = match command {
            Some(Command::Answer { form, token, answer }) => (form, token, answer),
            Some(Command::OpenUrl { form, token, url }) => {
                if let Err(error) = opener::open(opener, &url) {
                    let why = opener::failed(opener, &error);
                    plain.open_failed(&why)?;
                    continue;
                }
                (form, token, Answer::bare(ElicitationAction::Accept))
            }
            Some(Command::Quit) => return Ok(()),
            None => continue,
        };
        let link = link.clone();
        let answers = answers_tx.clone();
        tokio::spawn(async move {
            let result = link.answer(&form, &token, &answer).await;
            let _ = answers.send((form, answer.action, result));
        });
    }
}
