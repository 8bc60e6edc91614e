//! Recognising sandboxed callers (Flatpak, Snap) as xdg-desktop-portal
//! does, from the PID the bus reports for a connection.
//!
//! A sandboxed app may ask (open a session, submit, wait, acknowledge),
//! but it may not see or answer anyone else's forms: no front-end
//! registration, no listing, claiming or answering, no history, no
//! remembered choices, no `FormChanged`. The sandbox is the reason the
//! user gave the app less than their own rights.

use std::io::ErrorKind;

/// The sandbox `pid` runs in, described for errors and logs; `None` for
/// an unsandboxed process. What cannot be inspected counts as sandboxed,
/// so that a failure never grants more.
pub fn detect(pid: Option<u32>) -> Option<String> {
    let Some(pid) = pid else {
        return Some("a process the bus does not name".into());
    };
    // Flatpak puts /.flatpak-info at the root of every sandbox; read
    // through /proc/PID/root, it is the sandbox's file, not ours.
    match std::fs::read_to_string(format!("/proc/{pid}/root/.flatpak-info")) {
        Ok(info) => {
            return Some(format!(
                "Flatpak app {}",
                flatpak_app(&info).unwrap_or("(unnamed)")
            ));
        }
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(error) => {
            return Some(format!("a process whose root cannot be inspected ({error})"));
        }
    }
    // Snap confines with AppArmor labels `snap.NAME.APP` and runs apps in
    // cgroups `snap.NAME.APP-….scope`; either gives it away.
    if let Ok(label) = std::fs::read_to_string(format!("/proc/{pid}/attr/current"))
        && let Some(snap) = label.trim().strip_prefix("snap.")
    {
        let snap = snap.split_whitespace().next().unwrap_or(snap);
        return Some(format!("Snap {snap}"));
    }
    if let Ok(cgroups) = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        && let Some(unit) = snap_cgroup(&cgroups)
    {
        return Some(format!("Snap {unit}"));
    }
    None
}

/// `name=` of the `[Application]` group (or `[Runtime]`) of a
/// `.flatpak-info`.
fn flatpak_app(info: &str) -> Option<&str> {
    let mut in_group = false;
    for line in info.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_group = line == "[Application]" || line == "[Runtime]";
        } else if in_group && let Some(name) = line.strip_prefix("name=") {
            return Some(name.trim());
        }
    }
    None
}

/// The snap scope in `/proc/PID/cgroup`, if a path component is one.
fn snap_cgroup(cgroups: &str) -> Option<&str> {
    cgroups
        .lines()
        .filter_map(|line| line.splitn(3, ':').nth(2))
        .flat_map(|path| path.split('/'))
        .find(|part| part.starts_with("snap.") && part.ends_with(".scope"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_app_and_the_snap_scope() {
        let info = "[Instance]\ninstance-id=1\n[Application]\nname=org.example.App\nruntime=x\n";
        assert_eq!(flatpak_app(info), Some("org.example.App"));
        let cgroups =
            "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-3f2a.scope\n";
        assert_eq!(snap_cgroup(cgroups), Some("snap.firefox.firefox-3f2a.scope"));
        assert_eq!(snap_cgroup("0::/user.slice/session-2.scope\n"), None);
        assert_eq!(
            detect(Some(std::process::id())),
            None,
            "the test itself runs unsandboxed"
        );
    }
}
