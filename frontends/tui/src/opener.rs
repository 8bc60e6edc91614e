//! Opening a URL the user agreed to open.

use std::path::Path;
use std::process::Stdio;

/// Starts `opener URL` detached from the terminal; the error says why it
/// could not start. The child is reaped in the background.
pub fn open(opener: &Path, url: &str) -> std::io::Result<()> {
    let mut child = tokio::process::Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(())
}

/// Why the address did not open, and what the user can do instead.
pub fn failed(opener: &Path, error: &std::io::Error) -> String {
    elicit_i18n::fill(
        &elicit_i18n::tr("Could not start {program}: {error}. Open the address yourself, or decline."),
        &[("program", &opener.display()), ("error", error)],
    )
}
