//! What crosses the private bus to and from a notification server, as a
//! bus monitor sees it: the `Notify` calls with the ids the server gave
//! them, and the `NotificationClosed` and `ActionInvoked` signals the
//! server emits; and who reads whose properties (a tray host reading a
//! status-notifier item). It reads the real servers' traffic without
//! standing in for any part of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use elicit_tests::PrivateBus;
use futures_util::StreamExt;
use zbus::message::Type;
use zbus::zvariant::OwnedValue;

const NOTIFICATIONS: &str = "org.freedesktop.Notifications";

/// A `Notify` call and the server's answer to it.
#[derive(Debug, Clone)]
pub struct Notified {
    /// Who asked (a unique bus name).
    pub sender: String,
    /// The id the server gave it, once it answered.
    pub id: Option<u32>,
    /// The title.
    pub summary: String,
    /// The text.
    pub body: String,
    /// The actions: key, label, key, label, …
    pub actions: Vec<String>,
    /// The `urgency` hint: 0 low, 1 normal, 2 critical.
    pub urgency: Option<u8>,
}

impl Notified {
    /// The action keys offered.
    pub fn keys(&self) -> Vec<&str> {
        self.actions.iter().step_by(2).map(String::as_str).collect()
    }
}

/// A signal of the server's: `(sender, id, detail)` where detail is the
/// action key of `ActionInvoked` or the reason of `NotificationClosed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// Who emitted it (a unique bus name).
    pub sender: String,
    /// The notification.
    pub id: u32,
    /// The action key, or the reason as text.
    pub detail: String,
}

#[derive(Default)]
struct Seen {
    notified: Vec<Notified>,
    /// (caller, serial) of a `Notify` call → its index in `notified`.
    pending: HashMap<(String, u32), usize>,
    closed: Vec<Emitted>,
    invoked: Vec<Emitted>,
    /// `Properties.GetAll` calls: (caller, destination, interface).
    reads: Vec<(String, String, String)>,
}

/// The monitor, recording while this value lives.
pub struct Traffic {
    seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Traffic {
    /// Starts monitoring `bus`; returns once the monitor is in place.
    pub async fn watch(bus: &PrivateBus) -> Traffic {
        let conn = bus.connect().await;
        let rules = [
            zbus::MatchRule::builder()
                .msg_type(Type::MethodCall)
                .interface(NOTIFICATIONS)
                .expect("an interface name")
                .build(),
            zbus::MatchRule::builder()
                .msg_type(Type::Signal)
                .interface(NOTIFICATIONS)
                .expect("an interface name")
                .build(),
            zbus::MatchRule::builder()
                .msg_type(Type::MethodCall)
                .interface("org.freedesktop.DBus.Properties")
                .expect("an interface name")
                .member("GetAll")
                .expect("a member name")
                .build(),
            // Replies carry no interface: every reply is seen and those
            // to a recorded `Notify` are kept.
            zbus::MatchRule::builder().msg_type(Type::MethodReturn).build(),
        ];
        zbus::fdo::MonitoringProxy::new(&conn)
            .await
            .expect("the monitoring interface")
            .become_monitor(&rules, 0)
            .await
            .expect("a bus monitor");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut stream = zbus::MessageStream::from(conn);
        let record = seen.clone();
        let task = tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                if let Ok(mut seen) = record.lock() {
                    seen.record(&message);
                }
            }
        });
        Traffic { seen, task }
    }

    /// The `Notify` calls so far.
    pub fn notified(&self) -> Vec<Notified> {
        self.seen.lock().map(|s| s.notified.clone()).unwrap_or_default()
    }

    /// The `NotificationClosed` signals so far.
    pub fn closed(&self) -> Vec<Emitted> {
        self.seen.lock().map(|s| s.closed.clone()).unwrap_or_default()
    }

    /// How often `caller` read all the properties of `interface` from
    /// `destination` (unique bus names).
    pub fn reads(&self, caller: &str, destination: &str, interface: &str) -> usize {
        self.seen
            .lock()
            .map(|s| {
                s.reads
                    .iter()
                    .filter(|(c, d, i)| c == caller && d == destination && i == interface)
                    .count()
            })
            .unwrap_or(0)
    }

    /// The `ActionInvoked` signals so far.
    pub fn invoked(&self) -> Vec<Emitted> {
        self.seen.lock().map(|s| s.invoked.clone()).unwrap_or_default()
    }
}

impl Drop for Traffic {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Seen {
    fn record(&mut self, message: &zbus::Message) {
        let header = message.header();
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let member = header.member().map(|m| m.to_string()).unwrap_or_default();
        match message.message_type() {
            Type::MethodCall if member == "Notify" => {
                type Args = (
                    String,
                    u32,
                    String,
                    String,
                    String,
                    Vec<String>,
                    HashMap<String, OwnedValue>,
                    i32,
                );
                let Ok((_, _, _, summary, body, actions, hints, _)) = message.body().deserialize::<Args>()
                else {
                    return;
                };
                let urgency = hints.get("urgency").and_then(|u| u8::try_from(u).ok());
                self.pending.insert(
                    (sender.clone(), header.primary().serial_num().get()),
                    self.notified.len(),
                );
                self.notified.push(Notified {
                    sender,
                    id: None,
                    summary,
                    body,
                    actions,
                    urgency,
                });
            }
            Type::MethodCall if member == "GetAll" => {
                let destination = header.destination().map(|d| d.to_string()).unwrap_or_default();
                if let Ok(interface) = message.body().deserialize::<String>() {
                    self.reads.push((sender, destination, interface));
                }
            }
            Type::MethodReturn => {
                let destination = header.destination().map(|d| d.to_string()).unwrap_or_default();
                let Some(serial) = header.reply_serial() else {
                    return;
                };
                let Some(index) = self.pending.remove(&(destination, serial.get())) else {
                    return;
                };
                if let Ok(id) = message.body().deserialize::<u32>() {
                    self.notified[index].id = Some(id);
                }
            }
            Type::Signal if member == "NotificationClosed" => {
                if let Ok((id, reason)) = message.body().deserialize::<(u32, u32)>() {
                    self.closed.push(Emitted {
                        sender,
                        id,
                        detail: reason.to_string(),
                    });
                }
            }
            Type::Signal if member == "ActionInvoked" => {
                if let Ok((id, key)) = message.body().deserialize::<(u32, String)>() {
                    self.invoked.push(Emitted {
                        sender,
                        id,
                        detail: key,
                    });
                }
            }
            _ => {}
        }
    }
}
