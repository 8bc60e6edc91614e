//! Opening a URL the user clicked "Open in browser" for: the desktop's
//! OpenURI portal where there is one, else `xdg-open`, or the program the
//! user named.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;

use zbus::zvariant::Value;

/// The portal's bus name.
const PORTAL: &str = "org.freedesktop.portal.Desktop";

/// Why a URL could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The opener program could not be started.
    #[error("cannot start {program}: {error}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// The portal refused.
    #[error("the desktop portal refused: {0}")]
    Portal(#[from] zbus::Error),
}

/// Opens `url`: with `program` when given, else through the OpenURI portal
/// on the session bus when one is running or activatable, else with
/// `xdg-open`. Returns once the opener has taken the URL; the browser
/// itself is not waited for.
pub async fn open(program: Option<&Path>, url: &str) -> Result<(), OpenError> {
    if let Some(program) = program {
        return spawn(program, url);
    }
    match portal().await {
        Some(conn) => open_with_portal(&conn, url).await,
        None => spawn(Path::new("xdg-open"), url),
    }
}

/// A session bus connection when the portal is there (running or
/// activatable); `None` sends the caller to `xdg-open`.
async fn portal() -> Option<zbus::Connection> {
    let conn = zbus::Connection::session().await.ok()?;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.ok()?;
    let name = zbus::names::BusName::try_from(PORTAL).ok()?;
    if dbus.name_has_owner(name.clone()).await.ok()? {
        return Some(conn);
    }
    let activatable = dbus.list_activatable_names().await.ok()?;
    activatable.iter().any(|n| n.as_str() == PORTAL).then_some(conn)
}

async fn open_with_portal(conn: &zbus::Connection, url: &str) -> Result<(), OpenError> {
    let options: HashMap<&str, Value<'_>> = HashMap::new();
    // The reply is the portal's request handle; the portal may still ask
    // the user which browser to use, which is its business.
    conn.call_method(
        Some(PORTAL),
        "/org/freedesktop/portal/desktop",
        Some("org.freedesktop.portal.OpenURI"),
        "OpenURI",
        &("", url, options),
    )
    .await?;
    Ok(())
}

/// Starts `program URL` detached; the child is reaped in the background.
fn spawn(program: &Path, url: &str) -> Result<(), OpenError> {
    let mut child = tokio::process::Command::new(program)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| OpenError::Spawn {
            program: program.display().to_string(),
            error,
        })?;
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(())
}
