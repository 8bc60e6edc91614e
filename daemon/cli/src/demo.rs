//! `elicit demo`: the newcomer's tour. Starts what is missing (a private
//! bus, `elicitd` on a temporary state directory, `elicit-tui`), submits
//! example forms from two example sessions, and cleans up afterwards.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use elicit_client::{ClientSession, connect};
use elicit_i18n::{fill, tr};
use elicit_proto::dbus::{BUS_NAME, Origin};

/// The example forms, compiled in so the demo needs no files.
const EXAMPLES: [(&str, &str); 4] = [
    (
        "confirm",
        include_str!("../../../packaging/examples/confirm.json"),
    ),
    (
        "every-kind",
        include_str!("../../../packaging/examples/every-kind.json"),
    ),
    (
        "url-consent",
        include_str!("../../../packaging/examples/url-consent.json"),
    ),
    (
        "contact",
        include_str!("../../../packaging/examples/contact.json"),
    ),
];

/// See what elicitd does, in one command.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run the terminal front-end in plain line mode.
    #[arg(long)]
    plain: bool,
}

/// Processes the demo started, stopped when it ends.
struct Started {
    children: Vec<Child>,
    dir: PathBuf,
}

impl Drop for Started {
    fn drop(&mut self) {
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A binary installed beside this one (as cargo and packages lay them out),
/// else from `PATH`.
fn sibling(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(name)))
        .filter(|path| path.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}

pub async fn run(args: Args, bus: Option<&str>) -> anyhow::Result<ExitCode> {
    let dir = std::env::temp_dir().join(format!("elicit-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut started = Started {
        children: Vec::new(),
        dir: dir.clone(),
    };
    let address = match bus
        .map(str::to_owned)
        .or_else(|| std::env::var("DBUS_SESSION_BUS_ADDRESS").ok())
    {
        Some(address) if connect(Some(&address)).await.is_ok() => address,
        _ => {
            let (child, address) = start_bus(&dir)?;
            started.children.push(child);
            let line = fill(
                &tr("started a private session bus at {address}"),
                &[("address", &address)],
            );
            crate::out::note(format_args!("{line}"));
            address
        }
    };
    let conn = connect(Some(&address)).await?;
    if !broker_running(&conn).await {
        // The demo's front-end is the TUI it starts: the daemon must not
        // open a GTK window or notifications of its own for the examples
        // that come before the TUI has registered.
        std::fs::write(dir.join("config.toml"), "[frontends]\nprogram = []\n")
            .context("cannot write the demo's config")?;
        let child = Command::new(sibling("elicitd"))
            .arg("--bus")
            .arg(&address)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .arg("--config")
            .arg(dir.join("config.toml"))
            .env("ELICITD_LOG", "warn")
            .stdin(Stdio::null())
            .spawn()
            .context("cannot start elicitd (build it with `cargo build --release`)")?;
        started.children.push(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !broker_running(&conn).await {
            if Instant::now() > deadline {
                bail!("elicitd did not come up on {address}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        crate::out::note(format_args!(
            "{}",
            tr("started elicitd with a temporary state directory")
        ));
    }

    let asking = tokio::spawn(submit_examples(conn.clone()));
    // Awaited, not waited on: the examples are submitted on this same
    // thread while the TUI runs.
    let mut tui = tokio::process::Command::new(sibling("elicit-tui"));
    tui.arg("--bus").arg(&address);
    if args.plain {
        tui.arg("--plain");
    }
    let mut tui = tui
        .kill_on_drop(true)
        .spawn()
        .context("cannot start elicit-tui (build it with `cargo build --release`)")?;
    // A closed terminal (SIGHUP) or a kill (SIGTERM) must still clean up.
    let status = tokio::select! {
        status = tui.wait() => Some(status?),
        () = ended_by_signal() => None,
    };
    asking.abort();
    crate::out::note(format_args!(
        "{}",
        tr("demo over; everything it started is stopped")
    ));
    drop(started);
    Ok(match status {
        Some(status) if status.success() => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

async fn ended_by_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::hangup()), signal(SignalKind::terminate())) {
        (Ok(mut hangup), Ok(mut terminate)) => {
            tokio::select! {
                _ = hangup.recv() => {}
                _ = terminate.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

/// Starts `dbus-daemon --session` and reads the address it prints once it
/// listens.
fn start_bus(dir: &Path) -> anyhow::Result<(Child, String)> {
    let mut child = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address"])
        .arg(format!("--address=unix:path={}", dir.join("bus").display()))
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start dbus-daemon (install the dbus package)")?;
    let stdout = child.stdout.take().context("dbus-daemon has no stdout")?;
    let mut address = String::new();
    BufReader::new(stdout).read_line(&mut address)?;
    Ok((child, address.trim().to_owned()))
}

async fn broker_running(conn: &zbus::Connection) -> bool {
    let Ok(dbus) = zbus::fdo::DBusProxy::new(conn).await else {
        return false;
    };
    let Ok(name) = zbus::names::BusName::try_from(BUS_NAME) else {
        return false;
    };
    dbus.name_has_owner(name).await.unwrap_or(false)
}

/// Two example agents ask their questions, one after another each. Their
/// first questions go in in a fixed order, so the tour starts the same way
/// every time.
async fn submit_examples(conn: zbus::Connection) {
    let agents = [
        ("deployer", "Claude Code", &["confirm", "url-consent"][..]),
        ("contacts", "an IDE assistant", &["every-kind", "contact"][..]),
    ];
    let mut tasks = Vec::new();
    for (server, host, forms) in agents {
        let origin = Origin {
            server: Some(format!("demo-{server}")),
            host: Some(host.to_owned()),
            cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
            pid: Some(std::process::id()),
            ..Origin::default()
        };
        let Ok(mut session) = ClientSession::open(&conn, &origin).await else {
            return;
        };
        let mut requests = forms.iter().filter_map(|name| {
            EXAMPLES
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, request)| *request)
        });
        let Some(first) = requests.next() else { continue };
        let Ok(mut form) = session.submit(first, None, None).await else {
            continue;
        };
        let rest: Vec<&'static str> = requests.collect();
        tasks.push(tokio::spawn(async move {
            // The answer is the point of the demo for the user, not for us:
            // wait for it so that the next question follows.
            let _ = session.wait(&form).await;
            for request in rest {
                let Ok(next) = session.submit(request, None, None).await else {
                    return;
                };
                form = next;
                let _ = session.wait(&form).await;
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
}
