//! The asker-only socket: a remote agent can ask through it, and can do
//! nothing else with it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use elicit_proto::dbus::Broker1Proxy;
use elicit_tests::home::owner_pid;
use elicit_tests::mcp::{Host, text_of};
use elicit_tests::ssh::{Sshd, required};
use elicit_tests::which;
use elicit_tests::{
    Daemon, PrivateBus, TestFrontend, ask_through_socket, binary, eventually, is_root, within,
};
use serde_json::{Value, json};

/// A daemon on a private bus with its asker socket at a path of the test's.
async fn system() -> (PrivateBus, Daemon, TestFrontend, PathBuf) {
    let bus = PrivateBus::start();
    let socket = bus.dir().join("runtime/elicitd/agents.sock");
    let socket_env = socket.display().to_string();
    let daemon = Daemon::start_with_env(&bus, "", &[("ELICITD_ASKER_SOCKET", Some(&socket_env))]).await;
    eventually("the asker socket", || std::future::ready(socket.exists())).await;
    let frontend = TestFrontend::register(&bus, "scripted", 0).await;
    (bus, daemon, frontend, socket)
}

fn asker_address(socket: &Path) -> String {
    format!("{}{}", elicit_client::ASKER_ADDRESS_PREFIX, socket.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_asker_socket_serves_asking_and_refuses_everything_else() {
    let (bus, _daemon, mut frontend, socket) = system().await;
    let mode = |path: &Path| std::fs::metadata(path).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(socket.parent().expect("folder")), 0o700);

    // Asking works: `elicit ask` through the socket, answered on the bus.
    let ask = ask_through_socket(
        &bus,
        &socket,
        "From afar?",
        r#"{"type":"object","properties":{"note":{"type":"string"}}}"#,
    );
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "From afar?");
    // The form is marked as remote for rules and front-ends.
    let listed = std::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "list", "--json"])
        .output()
        .expect("elicit list");
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("list JSON");
    assert_eq!(listed[0]["origin"]["remote"], json!(true), "{listed}");
    frontend
        .answer(&shown, "accept", json!({"note": "hi"}))
        .await
        .expect("answer");
    let (printed, _) = elicit_tests::printed(ask).await;
    assert_eq!(printed, json!({"action": "accept", "content": {"note": "hi"}}));

    // Everything but asking is refused: the broker's other methods and
    // properties, and any other service, since no bus is behind it.
    let conn = elicit_client::connect(Some(&asker_address(&socket)))
        .await
        .expect("connect to the socket");
    let broker = Broker1Proxy::new(&conn).await.expect("proxy");
    let path = zbus::zvariant::ObjectPath::try_from("/dev/elicitd/frontend").expect("path");
    let refused: Vec<(&str, bool)> = vec![
        (
            "RegisterFrontend",
            broker.register_frontend(&path, Default::default()).await.is_err(),
        ),
        ("UnregisterFrontend", broker.unregister_frontend().await.is_err()),
        ("ListForms", broker.list_forms().await.is_err()),
        ("Claim", broker.claim(&shown.form).await.is_err()),
        (
            "Answer",
            broker
                .answer(&shown.form, &shown.token, "accept", "{}")
                .await
                .is_err(),
        ),
        ("PassOn", broker.pass_on(&shown.form, &shown.token).await.is_err()),
        ("History", broker.history(10).await.is_err()),
        ("ListRemembered", broker.list_remembered().await.is_err()),
        ("Forget", broker.forget(1).await.is_err()),
        ("Pending property", broker.pending().await.is_err()),
    ];
    let served: Vec<_> = refused.iter().filter(|(_, refused)| !refused).collect();
    assert!(served.is_empty(), "served through the asker socket: {served:?}");
    let others = [
        (
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "ListNames",
        ),
        (
            "org.freedesktop.Notifications",
            "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications",
            "GetServerInformation",
        ),
        (
            "org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service",
            "SearchItems",
        ),
    ];
    for (service, path, interface, method) in others {
        let reply = conn
            .call_method(Some(service), path, Some(interface), method, &())
            .await;
        assert!(reply.is_err(), "{service} answered through the asker socket");
    }
}

/// `id -u NAME`, creating the account first when it is missing.
fn remote_account(name: &str) -> (u32, u32) {
    let id = |flag: &str| {
        std::process::Command::new("id")
            .args([flag, name])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
    };
    if id("-u").is_none() {
        let status = std::process::Command::new("useradd")
            .args([
                "--system",
                "--shell",
                "/bin/sh",
                "--home-dir",
                "/nonexistent",
                name,
            ])
            .status()
            .expect("useradd");
        assert!(status.success(), "useradd {name}");
    }
    // A locked password ("!") makes sshd refuse the key login too.
    let _ = std::process::Command::new("usermod")
        .args(["-p", "*", name])
        .status();
    (id("-u").expect("uid"), id("-g").expect("gid"))
}

/// Whether `uid` can read `path` (the checkout may sit in root's home).
fn readable_by(uid: u32, gid: u32, path: &Path) -> bool {
    std::process::Command::new("setpriv")
        .args([
            format!("--reuid={uid}"),
            format!("--regid={gid}"),
            "--clear-groups".into(),
        ])
        .arg("test")
        .arg("-r")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// The remote account's copy of what it runs, where it cannot read ours.
fn remote_files(uid: u32, gid: u32, dir: &Path) -> (PathBuf, PathBuf) {
    let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers/python");
    let elicit = binary("elicit");
    if readable_by(uid, gid, &elicit) && readable_by(uid, gid, &peers.join("elicit_server.py")) {
        return (elicit, peers);
    }
    let copy = |from: &Path, to: &Path| {
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status();
        assert!(status.is_ok_and(|s| s.success()), "copy {}", from.display());
    };
    copy(&elicit, &dir.join("elicit"));
    std::fs::create_dir_all(dir.join("python")).expect("python dir");
    copy(&peers.join("elicit_server.py"), &dir.join("python"));
    copy(&peers.join("site"), &dir.join("python"));
    (dir.join("elicit"), dir.join("python"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_agent_of_another_uid_asks_through_the_forwarded_socket() {
    let tools = is_root() && which("setpriv").is_some() && which("useradd").is_some();
    if !required(
        "root with setpriv and useradd (another account to be the remote one)",
        tools,
    ) {
        return;
    }
    if !required(
        "the Python `mcp` package (tests/peers/python/site)",
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("peers/python/site/mcp")
            .exists(),
    ) {
        return;
    }
    let Some(sshd) = Sshd::start() else { return };
    let (_bus, _daemon, mut frontend, socket) = system().await;
    let (uid, gid) = remote_account("elicit-remote");
    assert_ne!(uid, rustix_uid(), "the remote account must have another uid");

    // The remote machine's side: a folder of the remote account's, where
    // sshd puts the forwarded socket.
    let remote = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(remote.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let home = remote.path().join("home");
    std::fs::create_dir(&home).expect("home");
    std::os::unix::fs::chown(&home, Some(uid), Some(gid)).expect("chown");
    let (elicit, python) = remote_files(uid, gid, remote.path());
    let remote_socket = home.join("elicit.sock");
    let ssh = sshd.forward("elicit-remote", &remote_socket, &socket).await;
    assert_eq!(std::fs::metadata(&remote_socket).expect("forwarded").uid(), uid);

    // An MCP host there runs its server through the proxy, as that account.
    let mut proxy = tokio::process::Command::new("setpriv");
    proxy
        .args([
            format!("--reuid={uid}"),
            format!("--regid={gid}"),
            "--clear-groups".into(),
        ])
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", home.display()))
        .arg(format!("PYTHONPATH={}", python.join("site").display()))
        .arg(&elicit)
        .arg("--asker-socket")
        .arg(&remote_socket)
        .args(["proxy", "--", "/usr/bin/python3"])
        .arg(python.join("elicit_server.py"));
    let mut host = Host::spawn(proxy);
    host.initialize(json!({})).await;
    let book = json!({"name": "book", "arguments": {}});
    host.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": book}))
        .await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.server.as_deref(), Some("elicit-test-server"));
    frontend
        .answer(&shown, "accept", json!({"seat": "12A", "count": 2}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(1)).await;
    assert!(text_of(&result).contains("booked 2 x 12A"), "{result}");

    // The connection goes; its open form is withdrawn after the grace.
    host.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": book}))
        .await;
    let shown = frontend.next_show().await;
    drop(ssh);
    let (form, reason) = frontend.next_withdraw().await;
    assert_eq!(
        (form.as_str(), reason.as_str()),
        (shown.form.as_str(), "client-gone")
    );
}

fn rustix_uid() -> u32 {
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
}

/// Socket activation (`elicitd.socket`): while no daemon runs, systemd
/// holds the socket; a remote agent's connection starts the daemon, which
/// serves the socket it was handed and leaves it in place when it exits
/// idle, so that the next connection can start the next daemon.
/// `systemd-socket-activate` plays systemd's part, as it does for any unit
/// under development.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_to_the_socket_systemd_holds_starts_the_daemon_which_leaves_it() {
    let activate = which("systemd-socket-activate");
    if !required(
        "systemd-socket-activate (Debian package systemd)",
        activate.is_some(),
    ) {
        return;
    }
    let bus = PrivateBus::start();
    let socket = bus.dir().join("runtime/elicitd/agents.sock");
    let folder = socket.parent().expect("folder");
    std::fs::create_dir_all(folder).expect("runtime folder");
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let config = bus.dir().join("config.toml");
    std::fs::write(&config, "[broker]\nexit-on-idle-secs = 1\n").expect("config");
    let log_path = bus.dir().join("elicitd.log");
    let log = std::fs::File::create(&log_path).expect("log");
    // Its environment is only what --setenv passes, as under systemd.
    let mut held = tokio::process::Command::new(activate.expect("checked above"))
        .arg("--listen")
        .arg(&socket)
        .arg("--setenv=ELICITD_LOG=debug")
        .arg(format!("--setenv=HOME={}", bus.dir().display()))
        .arg(binary("elicitd"))
        .args(["--bus", bus.address(), "--state-dir"])
        .arg(bus.dir().join("state"))
        .arg("--config")
        .arg(&config)
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("systemd-socket-activate");
    eventually("the socket to be held", || std::future::ready(socket.exists())).await;
    assert_eq!(owner_pid(&bus).await, None, "no daemon runs before a connection");

    let ask = ask_through_socket(
        &bus,
        &socket,
        "Woken by a remote agent?",
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#,
    );
    // The connection started the daemon, in the process that held the socket.
    let pid = within("the daemon to start and own its name", async {
        loop {
            if let Some(pid) = owner_pid(&bus).await {
                break pid;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(Some(pid), held.id(), "the daemon is the process systemd started");
    let mut frontend = TestFrontend::register(&bus, "scripted", 0).await;
    let shown = frontend.next_show().await;
    assert_eq!(shown.request["message"], "Woken by a remote agent?");
    frontend
        .answer(&shown, "accept", json!({"ok": true}))
        .await
        .expect("answer");
    let (printed, _) = elicit_tests::printed(ask).await;
    assert_eq!(printed, json!({"action": "accept", "content": {"ok": true}}));

    // Idle again, it exits, and the socket systemd holds stays.
    within("the daemon to exit idle", held.wait())
        .await
        .expect("wait");
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(
        log.contains(&format!("asker socket ready path={}", socket.display())),
        "the daemon did not serve the socket it was handed:\n{log}"
    );
    assert!(
        socket.exists(),
        "the daemon removed the socket systemd holds:\n{log}"
    );
}
