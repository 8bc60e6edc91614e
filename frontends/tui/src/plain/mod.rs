//! `--plain`: one question per line on standard input and output, in the
//! manner of pinentry-tty, for screen readers and dumb terminals.

mod field;
mod run;
mod safe;

use std::collections::VecDeque;
use std::io::{self, Write};

use elicit_form::FormModel;
use elicit_i18n::{fill, tr, trn};
use elicit_proto::{Answer, ElicitationAction, Error};

use crate::app::{Command, sent_text, withdrawn_text};
use crate::bus::BusEvent;
use crate::entry::{Body, Entry, reason_text};
use field::{ask, enter, shown};
pub use run::run;
use safe::SafeTerminal;

/// Where the conversation about the current form is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Asking for field `n`.
    Field(usize),
    /// All fields asked: send, edit, decline or cancel?
    Review,
    /// A confirmation or a URL: yes, decline or cancel?
    Consent,
    /// The answer is on its way.
    Sending,
}

/// The line-by-line conversation, writing to `out`.
pub struct Plain<W: Write> {
    out: SafeTerminal<W>,
    waiting: VecDeque<Entry>,
    current: Option<(Entry, Step)>,
}

impl<W: Write> Plain<W> {
    /// A conversation that writes to `out`.
    pub fn new(out: W) -> Self {
        Plain {
            out: SafeTerminal::new(out),
            waiting: VecDeque::new(),
            current: None,
        }
    }

    /// What was written (for tests).
    pub fn output(&self) -> &W {
        self.out.get_ref()
    }

    /// Applies a bus event.
    pub fn on_bus(&mut self, event: BusEvent) -> io::Result<()> {
        match event {
            BusEvent::Show(show) => {
                let entry = Entry::new(*show);
                if self.current.as_ref().is_some_and(|(e, _)| e.form == entry.form) {
                    // Shown again (the broker re-sent it): start over.
                    self.current = None;
                }
                self.waiting.retain(|e| e.form != entry.form);
                self.waiting.push_back(entry);
                if self.current.is_none() {
                    self.next()?;
                } else if let Some(last) = self.waiting.back() {
                    writeln!(
                        self.out,
                        "{}",
                        fill(
                            &tr("(Another form is waiting, from {server}.)"),
                            &[("server", &last.server())]
                        )
                    )?;
                }
            }
            BusEvent::Withdraw { form, reason } => {
                if self.current.as_ref().is_some_and(|(e, _)| e.form == form) {
                    if let Some((entry, _)) = self.current.take() {
                        writeln!(self.out)?;
                        writeln!(self.out, "{}", withdrawn_text(&entry, &reason))?;
                    }
                    self.next()?;
                } else if let Some(index) = self.waiting.iter().position(|e| e.form == form)
                    && let Some(entry) = self.waiting.remove(index)
                {
                    let text = tr("A waiting form from {server} was withdrawn: {reason}.");
                    let reason = reason_text(&reason);
                    writeln!(
                        self.out,
                        "{}",
                        fill(&text, &[("server", &entry.server()), ("reason", &reason)])
                    )?;
                }
            }
            // Forms stay: the broker may show queued ones before the
            // registration's reply arrives.
            BusEvent::Registered if self.current.is_none() => {
                writeln!(
                    self.out,
                    "{}",
                    tr("elicit-tui: registered with elicitd; waiting for forms.")
                )?;
            }
            BusEvent::Registered | BusEvent::Backlog(_) => {}
            BusEvent::BrokerGone(why) => {
                self.current = None;
                self.waiting.clear();
                writeln!(self.out, "elicit-tui: {why}")?;
            }
        }
        self.out.flush()
    }

    /// Handles one line the user typed; returns what to send, if anything.
    pub fn on_line(&mut self, line: &str) -> io::Result<Option<Command>> {
        let line = line.trim();
        if line == ":q" || line == ":quit" {
            return Ok(Some(Command::Quit));
        }
        let Some((entry, step)) = self.current.as_mut() else {
            writeln!(self.out, "{}", tr("(No form is waiting.)"))?;
            return Ok(None);
        };
        let reply = |answer: Answer| Command::Answer {
            form: entry.form.clone(),
            token: entry.token.clone(),
            answer,
        };
        let command = match (line, *step) {
            (_, Step::Sending) => {
                writeln!(self.out, "{}", tr("(Sending; please wait.)"))?;
                None
            }
            (":d" | ":decline", _) => Some(reply(FormModel::decline())),
            (":c" | ":cancel", _) => Some(reply(FormModel::cancel())),
            (":?" | ":help", _) => {
                // TRANSLATORS: :d, :c and :q are typed as they are; "-" too.
                let help = tr(
                    "At any prompt: :d declines, :c cancels, :q quits. Enter alone keeps the value in brackets; - clears it.",
                );
                writeln!(self.out, "{help}")?;
                None
            }
            (_, Step::Field(i)) => {
                let next = match &mut entry.body {
                    Body::Form(model) => enter(&mut self.out, model, i, line)?,
                    _ => None,
                };
                if let Some(next) = next {
                    *step = next;
                }
                None
            }
            (_, Step::Review) => match (line.to_ascii_lowercase().as_str(), &mut entry.body) {
                ("y" | "yes" | "", Body::Form(model)) => match model.submit() {
                    Ok(answer) => Some(reply(answer)),
                    Err(errors) => {
                        for error in errors {
                            writeln!(self.out, "! {error}")?;
                        }
                        *step = Step::Field(model.focus());
                        None
                    }
                },
                ("e" | "edit", _) => {
                    *step = Step::Field(0);
                    None
                }
                ("d" | "decline", _) => Some(reply(FormModel::decline())),
                ("c" | "cancel", _) => Some(reply(FormModel::cancel())),
                _ => {
                    writeln!(self.out, "{}", tr("Please type y, e, d or c."))?;
                    None
                }
            },
            (_, Step::Consent) => match (line.to_ascii_lowercase().as_str(), &mut entry.body) {
                ("y" | "yes", Body::Url(view)) => Some(Command::OpenUrl {
                    form: entry.form.clone(),
                    token: entry.token.clone(),
                    url: view.full.clone(),
                }),
                ("y" | "yes", Body::Form(model)) => model.submit().ok().map(reply),
                ("d" | "decline" | "n" | "no", _) => Some(reply(FormModel::decline())),
                ("c" | "cancel", _) => Some(reply(FormModel::cancel())),
                _ => {
                    writeln!(self.out, "{}", tr("Please type y, d or c."))?;
                    None
                }
            },
        };
        if command.is_some() {
            *step = Step::Sending;
        } else {
            self.prompt()?;
        }
        self.out.flush()?;
        Ok(command)
    }

    /// The broker's reply to an answer.
    pub fn on_answered(
        &mut self,
        form: &str,
        action: &ElicitationAction,
        result: Result<(), Error>,
    ) -> io::Result<()> {
        let Some((entry, step)) = self.current.as_mut().filter(|(e, _)| e.form == form) else {
            return Ok(());
        };
        match result {
            Ok(()) => {
                writeln!(self.out, "{}", sent_text(entry, action))?;
                self.current = None;
                self.next()?;
            }
            Err(Error::InvalidAnswer(json)) => {
                writeln!(self.out, "{}", tr("elicitd refused the answer:"))?;
                let errors = elicit_form::parse_field_errors(&json);
                for error in &errors {
                    writeln!(self.out, "! {error}")?;
                }
                if let Body::Form(model) = &mut entry.body {
                    model.apply_server_errors(&errors);
                    *step = Step::Field(model.focus());
                }
                self.prompt()?;
            }
            Err(error) => {
                writeln!(
                    self.out,
                    "{}",
                    fill(&tr("The answer was not taken: {error}"), &[("error", &error)])
                )?;
                if error.broker_unreachable() {
                    *step = if matches!(entry.body, Body::Form(ref m) if !m.is_confirmation()) {
                        Step::Review
                    } else {
                        Step::Consent
                    };
                    self.prompt()?;
                } else {
                    self.current = None;
                    self.next()?;
                }
            }
        }
        self.out.flush()
    }

    /// The opener failed: the form stays, the user can decline or cancel.
    pub fn open_failed(&mut self, why: &str) -> io::Result<()> {
        writeln!(self.out, "{why}")?;
        if let Some((_, step)) = self.current.as_mut() {
            *step = Step::Consent;
        }
        self.prompt()?;
        self.out.flush()
    }

    /// Starts the next waiting form, if any.
    fn next(&mut self) -> io::Result<()> {
        let Some(entry) = self.waiting.pop_front() else {
            return Ok(());
        };
        writeln!(self.out)?;
        writeln!(self.out, "== {} ==", crate::entry::heading(&entry))?;
        if !self.waiting.is_empty() {
            let n = self.waiting.len();
            writeln!(
                self.out,
                "{}",
                trn("({n} more waiting.)", "({n} more waiting.)", n)
            )?;
        }
        writeln!(self.out, "{}", entry.message)?;
        let step = match &entry.body {
            Body::Form(model) if !model.is_confirmation() => {
                let n = model.fields().len();
                // TRANSLATORS: :d and :c are typed as they are; "-" too.
                let help = trn(
                    "{n} field. At any prompt: :d declines, :c cancels. Enter alone keeps the value in brackets; - clears it.",
                    "{n} fields. At any prompt: :d declines, :c cancels. Enter alone keeps the value in brackets; - clears it.",
                    n,
                );
                writeln!(self.out, "{help}")?;
                Step::Field(0)
            }
            Body::Url(view) => {
                writeln!(self.out, "{}", tr("The server asks you to open this address:"))?;
                writeln!(self.out, "  {}", view.full)?;
                writeln!(
                    self.out,
                    "  {}",
                    fill(&tr("Host: {host}"), &[("host", &view.host)])
                )?;
                for warning in &view.warnings {
                    writeln!(
                        self.out,
                        "  ! {}",
                        fill(&tr("Warning: {warning}."), &[("warning", warning)])
                    )?;
                }
                Step::Consent
            }
            Body::Unreadable(why) => {
                writeln!(
                    self.out,
                    "{}",
                    fill(&tr("This form cannot be shown here ({why})."), &[("why", why)])
                )?;
                Step::Consent
            }
            Body::Form(_) => Step::Consent,
        };
        self.current = Some((entry, step));
        self.prompt()
    }

    /// Writes the question of the current step.
    fn prompt(&mut self) -> io::Result<()> {
        let Some((entry, step)) = &self.current else {
            return Ok(());
        };
        match (step, &entry.body) {
            (Step::Field(i), Body::Form(model)) => ask(&mut self.out, model, *i)?,
            (Step::Review, Body::Form(model)) => {
                writeln!(self.out, "{}", tr("Your answer:"))?;
                for state in model.fields() {
                    writeln!(
                        self.out,
                        "  {}: {}",
                        state.field().label,
                        shown(state.input(), &state.field().kind)
                    )?;
                }
                // TRANSLATORS: the letters in brackets are the keys to type: keep y, e, d and c.
                write!(
                    self.out,
                    "{}",
                    tr("Send it? [y]es, [e]dit, [d]ecline, [c]ancel: ")
                )?;
            }
            (Step::Consent, Body::Url(_)) => {
                write!(
                    self.out,
                    "{}",
                    tr("Open it in your browser? [y]es, [d]ecline, [c]ancel: ")
                )?;
            }
            (Step::Consent, Body::Form(_)) => {
                write!(self.out, "{}", tr("Accept? [y]es, [d]ecline, [c]ancel: "))?
            }
            (Step::Consent, Body::Unreadable(_)) => write!(self.out, "{}", tr("[d]ecline or [c]ancel: "))?,
            _ => {}
        }
        self.out.flush()
    }
}
