//! The desktop's notification server, `org.freedesktop.Notifications`.
//!
//! Three things here are deliberate:
//! * the signals are subscribed to (one match rule, so that `ActionInvoked`
//!   and `NotificationClosed` arrive in the order sent) before anything is
//!   shown, so that a quick click cannot be missed;
//! * notifications are sent on this program's own connection, the one that
//!   listens: servers such as dunst and Plasma send the signals to the
//!   sender of `Notify` alone;
//! * a signal counts only when its sender is the current owner of the
//!   name, tracked through `NameOwnerChanged`: any client on the bus can
//!   emit a signal with this interface, and a forged `ActionInvoked` must
//!   not answer a form.

use std::collections::HashMap;

use futures_util::StreamExt;
use notify_rust::{Hint, Notification};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use zbus::fdo::{DBusProxy, NameOwnerChangedStream};
use zbus::zvariant::Value;
use zbus::{Connection, MatchRule, MessageStream};

use crate::escalate::Urgency;

/// The notification server's bus name and interface.
pub const NAME: &str = "org.freedesktop.Notifications";
/// Its object path.
pub const PATH: &str = "/org/freedesktop/Notifications";

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications",
    gen_blocking = false
)]
trait Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[String],
        hints: HashMap<&str, Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    fn close_notification(&self, id: u32) -> zbus::Result<()>;

    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;
}

/// What the notification server said, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// The user chose action `key` of notification `id`.
    Action {
        /// The notification.
        id: u32,
        /// The action's key.
        key: String,
    },
    /// Notification `id` is gone: 1 expired, 2 dismissed by the user,
    /// 3 closed by `CloseNotification`, 4 other.
    Closed {
        /// The notification.
        id: u32,
        /// Why.
        reason: u32,
    },
    /// The server changed (`Some`: its new unique name) or left (`None`);
    /// its notifications went with it.
    ServerChanged(Option<String>),
}

/// The notification server as seen from one connection.
pub struct Server {
    proxy: NotificationsProxy<'static>,
    /// Checked signals, from the [`Watch`] task.
    inbox: UnboundedReceiver<Signal>,
    /// Someone owns the name.
    present: bool,
    capabilities: Vec<String>,
}

/// Reads the server's signals and owner changes in a task of its own, so
/// that the bus connection never waits for the front-end: a flood of
/// forged signals is read and dropped at once, and cannot fill the
/// stream's queue and stall the replies the front-end awaits.
struct Watch {
    signals: MessageStream,
    owners: NameOwnerChangedStream,
    owner: Option<String>,
}

impl Server {
    /// Subscribes to the server's signals and to its owner changes, then
    /// learns the current owner and its capabilities: in that order, so
    /// that nothing between the steps is missed.
    pub async fn connect(conn: &Connection) -> zbus::Result<Server> {
        let rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface(NAME)?
            .path(PATH)?
            .build();
        let signals = MessageStream::for_match_rule(rule, conn, Some(64)).await?;
        let dbus = DBusProxy::new(conn).await?;
        let owners = dbus.receive_name_owner_changed_with_args(&[(0, NAME)]).await?;
        let owner = match zbus::names::BusName::try_from(NAME) {
            Ok(name) => dbus.get_name_owner(name).await.ok().map(|o| o.to_string()),
            Err(_) => None,
        };
        let proxy = NotificationsProxy::builder(conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let (outbox, inbox) = tokio::sync::mpsc::unbounded_channel();
        let present = owner.is_some();
        let watch = Watch {
            signals,
            owners,
            owner,
        };
        tokio::spawn(watch.run(outbox));
        let mut server = Server {
            proxy,
            inbox,
            present,
            capabilities: Vec::new(),
        };
        server.refresh_capabilities().await;
        Ok(server)
    }

    /// Asks the server what it can do; a server that is not there can do
    /// nothing.
    pub async fn refresh_capabilities(&mut self) {
        self.capabilities = if self.present {
            self.proxy.get_capabilities().await.unwrap_or_default()
        } else {
            Vec::new()
        };
    }

    /// The server shows actions (buttons or a menu) and reports them.
    pub fn has_actions(&self) -> bool {
        self.capabilities.iter().any(|c| c == "actions")
    }

    /// The server reads the body as markup.
    pub fn has_markup(&self) -> bool {
        self.capabilities.iter().any(|c| c == "body-markup")
    }

    /// Shows `notification`; returns its id.
    pub async fn show(&self, notification: &Notification) -> zbus::Result<u32> {
        let hints: HashMap<&str, Value<'_>> =
            notification.hints.iter().map(<(&str, Value<'_>)>::from).collect();
        self.proxy
            .notify(
                &notification.appname,
                0,
                &notification.icon,
                &notification.summary,
                &notification.body,
                &notification.actions,
                hints,
                i32::from(notification.timeout),
            )
            .await
    }

    /// Closes notification `id`; one that is gone already is no error.
    pub async fn close(&self, id: u32) {
        let _ = self.proxy.close_notification(id).await;
    }

    /// The next signal from the current owner of the name; signals from
    /// anyone else are dropped. `None` when the connection is gone.
    /// Cancel-safe.
    pub async fn next(&mut self) -> Option<Signal> {
        let signal = self.inbox.recv().await?;
        if let Signal::ServerChanged(owner) = &signal {
            self.present = owner.is_some();
        }
        Some(signal)
    }
}

impl Watch {
    /// Forwards checked signals until the connection or the front-end is
    /// gone.
    async fn run(mut self, outbox: UnboundedSender<Signal>) {
        while let Some(signal) = self.next().await {
            if outbox.send(signal).is_err() {
                return;
            }
        }
    }

    /// The next signal from the current owner of the name.
    async fn next(&mut self) -> Option<Signal> {
        loop {
            tokio::select! {
                // Owner changes first, so that a new server's first
                // signal is judged against the new owner.
                biased;
                change = self.owners.next() => {
                    let change = change?;
                    let Ok(args) = change.args() else { continue };
                    self.owner = args.new_owner().as_ref().map(|o| o.to_string());
                    return Some(Signal::ServerChanged(self.owner.clone()));
                }
                message = self.signals.next() => {
                    let Ok(message) = message? else { continue };
                    if let Some(signal) = self.check(&message) {
                        return Some(signal);
                    }
                }
            }
        }
    }

    /// The signal in `message`, if its sender owns the name now.
    fn check(&self, message: &zbus::Message) -> Option<Signal> {
        let header = message.header();
        let sender = header.sender()?.as_str();
        if self.owner.as_deref() != Some(sender) {
            eprintln!(
                "elicit-notify: ignored a notification signal from {sender}, which is not the notification server"
            );
            return None;
        }
        let body = message.body();
        match header.member()?.as_str() {
            "ActionInvoked" => {
                let (id, key): (u32, String) = body.deserialize().ok()?;
                Some(Signal::Action { id, key })
            }
            "NotificationClosed" => {
                let (id, reason): (u32, u32) = body.deserialize().ok()?;
                Some(Signal::Closed { id, reason })
            }
            _ => None,
        }
    }
}

/// A notification for a form: never expires by itself, stays after an
/// action is invoked (the answer closes it), and asks for attention at
/// `urgency` (critical only when the form's deadline is near: GNOME and
/// Plasma let critical notifications through Do Not Disturb).
pub fn form_notification(
    summary: &str,
    body: &str,
    icon: &str,
    actions: Vec<String>,
    urgency: Urgency,
) -> Notification {
    let urgency = match urgency {
        Urgency::Normal => notify_rust::Urgency::Normal,
        Urgency::Critical => notify_rust::Urgency::Critical,
    };
    let mut notification = Notification::new();
    notification
        .appname("elicitd")
        .icon(icon)
        .summary(summary)
        .body(body)
        .hint(Hint::Category("x-elicitd.form".into()))
        .hint(Hint::Resident(true))
        .hint(Hint::Urgency(urgency))
        .timeout(notify_rust::Timeout::Never);
    notification.actions = actions;
    notification
}

/// A notification that only tells (the server cannot take answers): it
/// expires as the server's others do.
pub fn info_notification(summary: &str, body: &str, icon: &str) -> Notification {
    let mut notification = Notification::new();
    notification
        .appname("elicitd")
        .icon(icon)
        .summary(summary)
        .body(body)
        .hint(Hint::Category("x-elicitd.form".into()));
    notification
}
