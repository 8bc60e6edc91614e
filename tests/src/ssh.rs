//! A real OpenSSH server on 127.0.0.1 with keys and a config of its own,
//! and `ssh -R` forwardings through it: the remote-agent tests, where the
//! "remote" machine is another account (or the same one) on this one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::eventually;

/// A running `sshd` and the key that logs into it.
pub struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    _server: tokio::process::Child,
}

/// `None` after a loud notice when `what` is missing, a failure under `CI`.
pub fn required(what: &str, found: bool) -> bool {
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing (tests/setup installs it)"
        );
        eprintln!("\n!!! SKIPPED: {what} is missing; run tests/setup !!!\n");
    }
    found
}

impl Sshd {
    /// Starts sshd, or returns `None` (see [`required`]) without OpenSSH.
    pub fn start() -> Option<Sshd> {
        let sshd = PathBuf::from("/usr/sbin/sshd");
        let found = sshd.exists() && crate::which("ssh").is_some() && crate::which("ssh-keygen").is_some();
        if !required("OpenSSH (openssh-server, openssh-client)", found) {
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        for key in ["host_key", "user_key"] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .status()
                .expect("ssh-keygen");
            assert!(status.success());
        }
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).expect("authorized_keys");
        std::fs::create_dir_all("/run/sshd").expect("privilege separation dir");
        // An unused port: bind, read it, release it for sshd.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let config = d.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\n\
                 UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 AllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n",
                d.join("host_key").display(),
                d.join("authorized_keys").display()
            ),
        )
        .expect("sshd_config");
        // Every account logs in with the one authorized_keys file.
        let _ = Command::new("chmod")
            .arg("a+r")
            .arg(d.join("authorized_keys"))
            .status();
        let _ = Command::new("chmod").arg("a+x").arg(d).status();
        let server = tokio::process::Command::new(&sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("sshd");
        Some(Sshd {
            dir,
            port,
            _server: server,
        })
    }

    /// `ssh -N -R REMOTE:LOCAL USER@127.0.0.1`, once `remote` exists:
    /// sshd may need a moment to listen, so the client is retried.
    pub async fn forward(&self, user: &str, remote: &Path, local: &Path) -> tokio::process::Child {
        let forward = format!("{}:{}", remote.display(), local.display());
        let mut client: Option<tokio::process::Child> = None;
        eventually("the ssh -R socket to appear", || {
            if remote.exists() {
                return std::future::ready(true);
            }
            let running = client
                .as_mut()
                .is_some_and(|c| c.try_wait().ok().flatten().is_none());
            if !running {
                client = tokio::process::Command::new("ssh")
                    .args(["-N", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no"])
                    .args([
                        "-o",
                        "UserKnownHostsFile=/dev/null",
                        "-o",
                        "ExitOnForwardFailure=yes",
                    ])
                    .arg("-i")
                    .arg(self.dir.path().join("user_key"))
                    .arg("-p")
                    .arg(self.port.to_string())
                    .arg("-R")
                    .arg(&forward)
                    .arg(format!("{user}@127.0.0.1"))
                    .stderr(Stdio::null())
                    .kill_on_drop(true)
                    .spawn()
                    .ok();
            }
            std::future::ready(false)
        })
        .await;
        client.expect("ssh runs")
    }
}
