//! The tray item: a status-notifier item (`org.kde.StatusNotifierItem`,
//! through the `ksni` crate) that says whether forms wait and who asks,
//! with a menu of the waiting forms that opens the chosen one in the
//! window.
//!
//! It lives in `elicit-gtk` because elicit-gtk stays running with its
//! window hidden: the process that counts the forms is the one that shows
//! them, so a choice in the menu puts the form on screen with no program
//! to start and nothing to hand over.
//!
//! The count is every form the broker holds that waits for a person, to
//! whichever front-end it went (`ListForms`, refreshed on each
//! `FormChanged`): a form held quietly by elicit-notify under Do Not
//! Disturb counts too. A chosen form presented to this window comes to its
//! front; one presented elsewhere (or queued) is claimed (`Claim`) and
//! shown here.

use std::collections::HashSet;
use std::time::Duration;

use async_channel::Sender;
use elicit_form::{host_name, server_name};
use elicit_i18n::{fill, tr, trn};
use elicit_link::{LinkEvent, ShowRequest};
use elicit_proto::dbus::{Broker1Proxy, Origin};
use futures_util::StreamExt;
use ksni::TrayMethods;
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::bus::{BusEvent, FRONTEND_NAME};

/// How many askers the title names before "…".
const NAMED: usize = 3;
/// The most characters of a message in a menu item.
const MENU_MESSAGE: usize = 60;

/// A form that waits for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The broker's form id.
    pub form: String,
    /// "SERVER for HOST".
    pub asker: String,
    /// The server's message.
    pub message: String,
    /// The front-end it is presented to, if any.
    pub presented_to: Option<String>,
}

/// The waiting forms in a `ListForms` reply, oldest first.
pub fn waiting(list_json: &str) -> Vec<Waiting> {
    let Ok(Value::Array(forms)) = serde_json::from_str::<Value>(list_json) else {
        return Vec::new();
    };
    let mut forms: Vec<(u64, Waiting)> = forms
        .iter()
        .filter(|form| matches!(form["state"].as_str(), Some("queued" | "presented")))
        .filter_map(|form| {
            let origin: Origin = serde_json::from_value(form["origin"].clone()).unwrap_or_default();
            let waiting = Waiting {
                form: match &form["id"] {
                    Value::Number(n) => n.to_string(),
                    Value::String(s) => s.clone(),
                    _ => return None,
                },
                asker: fill(
                    &tr("{server} for {host}"),
                    &[("server", &server_name(&origin)), ("host", &host_name(&origin))],
                ),
                message: form["message"].as_str().unwrap_or_default().to_owned(),
                presented_to: form["presented-to"].as_str().map(str::to_owned),
            };
            Some((form["age-ms"].as_u64().unwrap_or(0), waiting))
        })
        .collect();
    // The oldest first: it is the nearest to its deadline.
    forms.sort_by_key(|(age, _)| std::cmp::Reverse(*age));
    forms.into_iter().map(|(_, w)| w).collect()
}

/// The item's title and tooltip: "2 forms waiting: deploy for Claude
/// Code, …", or that nothing waits.
pub fn summary(forms: &[Waiting]) -> String {
    if forms.is_empty() {
        return tr("No form waiting");
    }
    let mut askers: Vec<&str> = Vec::new();
    for form in forms {
        if !askers.contains(&form.asker.as_str()) {
            askers.push(&form.asker);
        }
    }
    let mut who = askers.iter().take(NAMED).copied().collect::<Vec<_>>().join(", ");
    if askers.len() > NAMED {
        who.push_str(", …");
    }
    let n = forms.len().to_string();
    fill(
        &trn("{n} form waiting: {who}", "{n} forms waiting: {who}", forms.len()),
        &[("n", &n), ("who", &who)],
    )
}

/// A menu item's label: who asks, and the start of the message.
pub fn menu_label(form: &Waiting) -> String {
    let message = form.message.trim();
    let message = match message.char_indices().nth(MENU_MESSAGE) {
        Some((cut, _)) => format!("{}…", message[..cut].trim_end()),
        None => message.to_owned(),
    };
    // Underscores are mnemonics in a dbusmenu label.
    format!("{}: {}", form.asker, message).replace('_', "__")
}

/// How long before the item registers again with a watcher that refused
/// it.
const RETRY: Duration = Duration::from_millis(500);

/// The status-notifier item.
#[derive(Debug)]
struct Item {
    forms: Vec<Waiting>,
    /// Where a menu choice goes: the form id.
    chosen: UnboundedSender<String>,
    /// Told when a watcher refused the registration.
    refused: UnboundedSender<()>,
}

impl ksni::Tray for Item {
    fn id(&self) -> String {
        "elicitd".into()
    }

    /// No watcher is no error: ksni registers when one comes. A watcher
    /// that is there but failed the registration (one that owns its name
    /// before it serves it, as a panel starts) ends this item, and
    /// [`run`] makes a new one, which registers again.
    fn watcher_offline(&self, reason: ksni::OfflineReason) -> bool {
        match reason {
            ksni::OfflineReason::No
            | ksni::OfflineReason::Error(ksni::Error::Watcher(zbus::fdo::Error::ServiceUnknown(_))) => true,
            _ => {
                let _ = self.refused.send(());
                false
            }
        }
    }

    fn category(&self) -> ksni::Category {
        ksni::Category::Communications
    }

    fn title(&self) -> String {
        summary(&self.forms)
    }

    fn status(&self) -> ksni::Status {
        if self.forms.is_empty() {
            ksni::Status::Passive
        } else {
            ksni::Status::NeedsAttention
        }
    }

    fn icon_name(&self) -> String {
        "dialog-question".into()
    }

    fn attention_icon_name(&self) -> String {
        "dialog-question".into()
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        ksni::ToolTip {
            icon_name: "dialog-question".into(),
            title: summary(&self.forms),
            ..Default::default()
        }
    }

    fn menu(&self) -> Vec<ksni::MenuItem<Self>> {
        self.forms
            .iter()
            .map(|form| {
                let id = form.form.clone();
                ksni::menu::StandardItem {
                    label: menu_label(form),
                    activate: Box::new(move |item: &mut Item| {
                        let _ = item.chosen.send(id.clone());
                    }),
                    ..Default::default()
                }
                .into()
            })
            .collect()
    }
}

/// Shows the item on the session bus and keeps it up to date with the
/// broker on `conn`, until the window is gone (`events` closed). A
/// desktop without a tray is no error: the item registers once a tray
/// comes.
pub async fn run(conn: zbus::Connection, events: Sender<BusEvent>) {
    let (chosen_tx, mut chosen) = unbounded_channel();
    let (refused_tx, mut refused) = unbounded_channel();
    let show = |forms: Vec<Waiting>| {
        let item = Item {
            forms,
            chosen: chosen_tx.clone(),
            refused: refused_tx.clone(),
        };
        async move {
            match item.assume_sni_available(true).spawn().await {
                Ok(handle) => Some(handle),
                Err(error) => {
                    eprintln!("elicit-gtk: no tray item: {error}");
                    None
                }
            }
        }
    };
    let Some(mut handle) = show(Vec::new()).await else {
        return;
    };
    let Ok(broker) = Broker1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
    else {
        return;
    };
    let (Ok(mut changes), Ok(mut owners)) = (
        broker.receive_form_changed().await,
        async {
            zbus::fdo::DBusProxy::new(&conn)
                .await?
                .receive_name_owner_changed_with_args(&[(0, elicit_proto::dbus::BUS_NAME)])
                .await
        }
        .await,
    ) else {
        return;
    };
    let mut tray = Tray {
        broker,
        events,
        forms: Vec::new(),
        claimed: HashSet::new(),
    };
    let _ = tray.broker.watch().await;
    tray.refresh(&handle).await;
    loop {
        tokio::select! {
            change = changes.next() => {
                let Some(change) = change else { break };
                if let Ok(args) = change.args() {
                    tray.changed(args.form(), args.state(), args.reason()).await;
                }
                tray.refresh(&handle).await;
            }
            owner = owners.next() => {
                if owner.is_none() {
                    break;
                }
                // A new broker: watch it, and count its forms.
                let _ = tray.broker.watch().await;
                tray.refresh(&handle).await;
            }
            form = chosen.recv() => {
                let Some(form) = form else { break };
                tray.open(&form).await;
            }
            Some(()) = refused.recv() => {
                tokio::time::sleep(RETRY).await;
                let Some(again) = show(tray.forms.clone()).await else { break };
                handle = again;
            }
        }
        if tray.events.is_closed() {
            break;
        }
    }
    handle.shutdown().await;
}

/// The item's side of the broker.
struct Tray {
    broker: Broker1Proxy<'static>,
    events: Sender<BusEvent>,
    forms: Vec<Waiting>,
    /// Forms this window claimed: the broker sends them no `Withdraw`.
    claimed: HashSet<String>,
}

impl Tray {
    /// Counts the forms again.
    async fn refresh(&mut self, handle: &ksni::Handle<Item>) {
        // A broker that is not there holds no forms.
        let forms = match self.broker.list_forms().await {
            Ok(json) => waiting(&json),
            Err(_) => Vec::new(),
        };
        if forms != self.forms {
            self.forms = forms.clone();
            handle.update(|item| item.forms = forms).await;
        }
    }

    /// A claimed form that ended elsewhere (timed out, its client gone)
    /// leaves the window as a withdrawn form does.
    async fn changed(&mut self, form: &str, state: &str, reason: &str) {
        if !self.claimed.contains(form) || matches!(state, "queued" | "presented") {
            return;
        }
        self.claimed.remove(form);
        // This window's own answer is reported by its reply.
        if reason != "answered" {
            let withdraw = LinkEvent::Withdraw {
                form: form.to_owned(),
                reason: reason.to_owned(),
            };
            let _ = self.events.send(BusEvent::Link(withdraw)).await;
        }
    }

    /// Puts `form` on screen: at the front of the window if it is
    /// presented here, else claimed from wherever it waits.
    async fn open(&mut self, form: &str) {
        let here = self
            .forms
            .iter()
            .any(|w| w.form == form && w.presented_to.as_deref() == Some(FRONTEND_NAME));
        if !here && !self.claimed.contains(form) {
            match self.broker.claim(form).await {
                Ok((token, request_json, info)) => {
                    self.claimed.insert(form.to_owned());
                    let show = ShowRequest::from_call(form.to_owned(), token, request_json, &info);
                    let _ = self
                        .events
                        .send(BusEvent::Link(LinkEvent::Show(Box::new(show))))
                        .await;
                }
                Err(error) => {
                    eprintln!("elicit-gtk: form {form}: cannot open it: {error}");
                    return;
                }
            }
        }
        let _ = self.events.send(BusEvent::Open(form.to_owned())).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn list() -> String {
        json!([
            {"id": 7, "state": "presented", "presented-to": "gtk", "age-ms": 10, "message": "Second?",
             "origin": {"server": "lint", "host": "Codex"}},
            {"id": 3, "state": "queued", "presented-to": null, "age-ms": 900, "message": "Deploy_now?",
             "origin": {"server": "deploy", "host": "Claude Code"}},
            {"id": 9, "state": "answered", "age-ms": 2000, "message": "Done",
             "origin": {"server": "x", "host": "y"}},
        ])
        .to_string()
    }

    #[test]
    fn waiting_forms_come_oldest_first() {
        let forms = waiting(&list());
        let ids: Vec<&str> = forms.iter().map(|w| w.form.as_str()).collect();
        assert_eq!(ids, ["3", "7"]);
        assert_eq!(forms[0].asker, "deploy for Claude Code");
        assert_eq!(forms[0].presented_to, None);
        assert_eq!(forms[1].presented_to.as_deref(), Some("gtk"));
        assert!(waiting("not json").is_empty());
    }

    #[test]
    fn the_summary_counts_and_names_who_asks() {
        let forms = waiting(&list());
        assert_eq!(
            summary(&forms),
            "2 forms waiting: deploy for Claude Code, lint for Codex"
        );
        assert_eq!(summary(&forms[..1]), "1 form waiting: deploy for Claude Code");
        assert_eq!(summary(&[]), "No form waiting");
        let many: Vec<Waiting> = (0..5)
            .map(|i| Waiting {
                asker: format!("s{i} for h"),
                ..forms[0].clone()
            })
            .collect();
        assert_eq!(summary(&many), "5 forms waiting: s0 for h, s1 for h, s2 for h, …");
    }

    #[test]
    fn a_menu_label_is_short_and_has_no_mnemonic() {
        let forms = waiting(&list());
        assert_eq!(menu_label(&forms[0]), "deploy for Claude Code: Deploy__now?");
        let long = Waiting {
            message: "x".repeat(200),
            ..forms[1].clone()
        };
        assert!(menu_label(&long).ends_with("x…"));
        assert!(menu_label(&long).chars().count() < 100);
    }
}
