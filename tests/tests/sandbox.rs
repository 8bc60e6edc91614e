//! Roles (issue 15, item 3): a sandboxed app may ask and nothing more; a
//! connection of another uid gets no properties and no `FormChanged`.
//!
//! A Flatpak sandbox is recognised by `/proc/PID/root/.flatpak-info`, as
//! xdg-desktop-portal does. The test makes one honestly: as root, the
//! caller runs in a private mount namespace, chrooted into a tree of bind
//! mounts whose root holds a `.flatpak-info`, so that the daemon reads
//! that file through the caller's `/proc/PID/root`, exactly as it would
//! for a real Flatpak app. Snap is recognised by its cgroup
//! (`snap.NAME.APP-….scope`), made the same way with a real cgroup.

use std::process::Output;

use elicit_tests::{Daemon, PrivateBus, TestFrontend, binary, is_root, within};
use serde_json::json;
use zbus::MatchRule;

/// Whether the test can run; without root it cannot, which fails under CI
/// and is said loudly elsewhere.
fn can_act_as_others(what: &str) -> bool {
    if is_root() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} needs root (unshare, chroot, setpriv), which CI must give"
    );
    eprintln!("SKIPPED {what}: it needs root (unshare, chroot, setpriv)");
    false
}

/// Runs `command` as a Flatpak app would run: in a mount namespace whose
/// root holds `/.flatpak-info`.
async fn in_flatpak(bus: &PrivateBus, command: &[&str]) -> Output {
    let root = bus.dir().join("flatpak-root");
    std::fs::create_dir(&root).expect("mkdir");
    let bin_dir = binary("elicit").parent().expect("dir").to_owned();
    let script = r#"set -e
R=$1; B=$2; shift 2
mount -t tmpfs tmpfs "$R"
for d in usr lib lib32 lib64 libx32 bin sbin etc; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$R/$d";
  elif [ -d "/$d" ]; then mkdir "$R/$d"; mount --rbind "/$d" "$R/$d"; fi
done
for d in proc dev tmp; do mkdir "$R/$d"; mount --rbind "/$d" "$R/$d"; done
mkdir -p "$R$B"; mount --bind "$B" "$R$B"
printf '[Application]\nname=org.example.Sandboxed\n' > "$R/.flatpak-info"
exec chroot "$R" "$@""#;
    within(
        "the sandboxed command",
        tokio::process::Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", script, "sh"])
            .arg(&root)
            .arg(&bin_dir)
            .args(command)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("unshare runs")
}

/// Runs `command` in a fresh cgroup named as snapd names an app's.
async fn in_snap(command: &[&str]) -> Option<Output> {
    let name = format!("snap.elicit-test.app-{}.scope", std::process::id());
    let parent = [
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup/systemd",
        "/sys/fs/cgroup",
    ]
    .into_iter()
    .map(std::path::Path::new)
    .find(|dir| dir.join("cgroup.procs").exists() && std::fs::create_dir(dir.join(&name)).is_ok())?;
    let group = parent.join(&name);
    let output = within(
        "the snap command",
        tokio::process::Command::new("sh")
            .args(["-c", r#"echo $$ > "$1/cgroup.procs" && shift && exec "$@""#, "sh"])
            .arg(&group)
            .args(command)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("sh runs");
    let _ = std::fs::remove_dir(&group);
    Some(output)
}

fn refused(output: &Output, sandbox: &str, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{what} was allowed: {stderr}");
    assert!(
        stderr.contains(sandbox) && stderr.contains("it may ask, but not"),
        "{what}: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flatpak_app_may_ask_and_nothing_more() {
    if !can_act_as_others("a_flatpak_app_may_ask_and_nothing_more") {
        return;
    }
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let elicit = binary("elicit");
    let elicit = elicit.to_str().expect("UTF-8 path");
    let address = bus.address();
    let app = "Flatpak app org.example.Sandboxed";
    for (args, what) in [
        (vec!["list"], "listing forms"),
        (vec!["history"], "reading history"),
        (vec!["policy", "list"], "reading remembered choices"),
        (vec!["watch"], "watching forms"),
        (vec!["answer", "1", "--decline"], "claiming a form"),
    ] {
        let command: Vec<&str> = [elicit, "--bus", address].into_iter().chain(args).collect();
        refused(&in_flatpak(&bus, &command).await, app, what);
        std::fs::remove_dir(bus.dir().join("flatpak-root")).expect("rmdir");
    }
    let register = [
        "busctl",
        "--address",
        address,
        "call",
        "dev.elicitd.Broker",
        "/dev/elicitd/Broker",
        "dev.elicitd.Broker1",
        "RegisterFrontend",
        "oa{sv}",
        "/app/frontend",
        "0",
    ];
    refused(&in_flatpak(&bus, &register).await, app, "registering a front-end");
    std::fs::remove_dir(bus.dir().join("flatpak-root")).expect("rmdir");
    // Asking is what it may do.
    let schema = bus.dir().join("note.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"note": {"type": "string"}}}"#,
    )
    .expect("schema");
    let schema = schema.to_str().expect("UTF-8 path");
    let command = [
        elicit,
        "--bus",
        address,
        "ask",
        "--message",
        "From the sandbox",
        "--schema",
        schema,
    ];
    let (output, ()) = tokio::join!(in_flatpak(&bus, &command), async {
        let shown = frontend.next_show().await;
        assert_eq!(shown.request["message"], "From the sandbox");
        frontend
            .answer(&shown, "accept", json!({"note": "granted"}))
            .await
            .expect("answer");
    });
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        printed,
        json!({"action": "accept", "content": {"note": "granted"}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snap_app_may_not_list_forms() {
    if !can_act_as_others("a_snap_app_may_not_list_forms") {
        return;
    }
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let elicit = binary("elicit");
    let elicit = elicit.to_str().expect("UTF-8 path");
    let Some(output) = in_snap(&[elicit, "--bus", bus.address(), "list"]).await else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no writable cgroup hierarchy to make a snap's cgroup in"
        );
        eprintln!("SKIPPED a_snap_app_may_not_list_forms: no writable cgroup hierarchy");
        return;
    };
    refused(&output, "Snap snap.elicit-test.app-", "listing forms");
    // The same command outside the cgroup is served.
    let plain = tokio::process::Command::new(elicit)
        .args(["--bus", bus.address(), "list"])
        .output()
        .await
        .expect("elicit list");
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_uid_gets_no_properties_and_no_form_changed() {
    if !can_act_as_others("another_uid_gets_no_properties_and_no_form_changed") {
        return;
    }
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let as_nobody = |program: &str, args: &[&str]| {
        let mut command = tokio::process::Command::new("setpriv");
        command
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(program)
            .args(args);
        command
    };
    let property = as_nobody(
        "busctl",
        &[
            "--address",
            bus.address(),
            "get-property",
            "dev.elicitd.Broker",
            "/dev/elicitd/Broker",
            "dev.elicitd.Broker1",
            "Pending",
        ],
    )
    .output()
    .await
    .expect("busctl");
    let stderr = String::from_utf8_lossy(&property.stderr);
    // busctl names the error (AccessDenied), not its message.
    assert!(
        !property.status.success() && stderr.contains("Access denied"),
        "{stderr}"
    );
    let elicit = binary("elicit");
    let watch = as_nobody(
        elicit.to_str().expect("UTF-8 path"),
        &["--bus", bus.address(), "watch"],
    )
    .output()
    .await
    .expect("elicit watch");
    let stderr = String::from_utf8_lossy(&watch.stderr);
    assert!(
        !watch.status.success() && stderr.contains("may not use the broker"),
        "{stderr}"
    );
    // `FormChanged` is not broadcast: a connection that subscribes without
    // being a watcher (as another uid's would) receives nothing, while a
    // watcher sees the event.
    let bystander = bus.connect().await;
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .member("FormChanged")
        .expect("member")
        .build();
    let mut overheard = zbus::MessageStream::for_match_rule(rule, &bystander, None)
        .await
        .expect("match");
    let watcher = bus.connect().await;
    let broker = elicit_proto::dbus::Broker1Proxy::new(&watcher)
        .await
        .expect("proxy");
    let mut changes = broker.receive_form_changed().await.expect("subscribe");
    broker.watch().await.expect("watch");
    let client = bus.connect().await;
    let session = elicit_client::ClientSession::open(&client, &Default::default())
        .await
        .expect("session");
    session
        .submit(
            r#"{"message": "Seen?", "requestedSchema": {"type": "object", "properties": {}}}"#,
            None,
            None,
        )
        .await
        .expect("submit");
    use futures_util::StreamExt;
    within("the watcher's FormChanged", changes.next())
        .await
        .expect("a signal");
    // The bystander's connection was given the signal first if at all:
    // one round trip on it after the watcher got it settles the order.
    zbus::fdo::DBusProxy::new(&bystander)
        .await
        .expect("proxy")
        .get_id()
        .await
        .expect("round trip");
    let leaked = tokio::time::timeout(std::time::Duration::ZERO, overheard.next()).await;
    assert!(leaked.is_err(), "a non-watcher received FormChanged: {leaked:?}");
}
