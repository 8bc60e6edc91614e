//! Saying who holds the broker's name when the daemon cannot take it.

use elicit_proto::dbus::BUS_NAME;

/// The error to stop with when `BUS_NAME` could not be taken: the holder's
/// PID and command line, and what to do about it. A program that took the
/// name after elicitd died is impersonating it; clients and front-ends
/// refuse it (it cannot prove it knows their sessions), but nobody is
/// served until it goes.
pub async fn name_taken(conn: &zbus::Connection, error: zbus::Error) -> anyhow::Error {
    let Some((unique, pid)) = holder(conn).await else {
        return anyhow::anyhow!("cannot own {BUS_NAME}: {error}");
    };
    let Some(pid) = pid else {
        return anyhow::anyhow!(
            "cannot own {BUS_NAME}: the bus connection {unique} holds it and the bus does not say \
             which process that is; find it with `busctl --user status {BUS_NAME}`, stop it, then \
             start elicitd again"
        );
    };
    let command = command_line(pid).unwrap_or_else(|| "?".into());
    let ours = command
        .split_whitespace()
        .next()
        .is_some_and(|exe| exe.rsplit('/').next() == Some("elicitd"));
    if ours {
        anyhow::anyhow!(
            "cannot own {BUS_NAME}: another elicitd already serves this bus (PID {pid}, `{command}`); \
             use that one, or stop it (`kill {pid}`) before starting this one"
        )
    } else {
        anyhow::anyhow!(
            "cannot own {BUS_NAME}: it is held by PID {pid} (`{command}`, bus name {unique}), which \
             is not elicitd. It may be impersonating the broker: clients and front-ends refuse it, \
             since it cannot prove it knows their sessions, but nothing is answered while it holds \
             the name. Check it (`ps -o pid,user,args -p {pid}`), stop it (`kill {pid}`), then start \
             elicitd again; waiting clients and front-ends re-attach by themselves"
        )
    }
}

async fn holder(conn: &zbus::Connection) -> Option<(String, Option<u32>)> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await.ok()?;
    let name = zbus::names::BusName::try_from(BUS_NAME).ok()?;
    let unique = dbus.get_name_owner(name).await.ok()?;
    let pid = dbus
        .get_connection_unix_process_id(unique.clone().into())
        .await
        .ok();
    Some((unique.to_string(), pid))
}

/// The process's command line, arguments joined by spaces, control
/// characters replaced (it ends up in a terminal).
fn command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let text: String = String::from_utf8_lossy(&raw)
        .trim_end_matches('\0')
        .chars()
        .map(|c| match c {
            '\0' => ' ',
            c if c.is_control() => '?',
            c => c,
        })
        .collect();
    (!text.is_empty()).then_some(text)
}
