//! `packaging/install.sh`: every file lands where a distribution expects it,
//! the unit and the D-Bus service file name the installed binary, and the
//! installed service file starts elicitd on the first call to its name.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use elicit_proto::dbus::BUS_NAME;
use elicit_tests::{PrivateBus, binary, eventually, within};
use serde_json::Value;

/// The folder the workspace's binaries were built into.
fn target_dir() -> PathBuf {
    binary("elicitd")
        .parent()
        .expect("a binary lives in a folder")
        .to_owned()
}

/// Runs `packaging/install.sh` with the debug binaries.
fn install(prefix: &Path, destdir: Option<&Path>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/install.sh");
    let mut command = Command::new("sh");
    command
        .arg(script)
        .arg(target_dir())
        .env("PREFIX", prefix)
        .env_remove("DESTDIR");
    if let Some(destdir) = destdir {
        command.env("DESTDIR", destdir);
    }
    let output = command.output().expect("install.sh runs");
    assert!(
        output.status.success(),
        "install.sh failed: {}",
        text(&output.stderr)
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn install_puts_every_file_in_its_place_and_names_the_prefix() {
    let stage = tempfile::tempdir().expect("temp dir");
    install(Path::new("/usr"), Some(stage.path()));
    let root = stage.path().join("usr");

    let mut expected: Vec<String> = ["elicitd", "elicit", "elicit-tui"]
        .iter()
        .flat_map(|bin| {
            [
                format!("bin/{bin}"),
                format!("share/man/man1/{bin}.1"),
                format!("share/bash-completion/completions/{bin}"),
                format!("share/zsh/site-functions/_{bin}"),
                format!("share/fish/vendor_completions.d/{bin}.fish"),
            ]
        })
        .collect();
    // One page per visible subcommand of elicit, from its clap definition.
    for sub in [
        "check", "ask", "list", "watch", "answer", "history", "status", "policy", "demo", "proxy",
    ] {
        expected.push(format!("share/man/man1/elicit-{sub}.1"));
    }
    expected.extend(
        [
            "lib/systemd/user/elicitd.service",
            "lib/systemd/user/elicitd.socket",
            "share/dbus-1/services/dev.elicitd.Broker.service",
            "share/elicitd/config.toml",
            "share/elicitd/rules.d/50-elicitd-defaults.rhai",
            "share/applications/dev.elicitd.Gtk.desktop",
            "share/locale/de/LC_MESSAGES/elicitd.mo",
            "share/locale/fr/LC_MESSAGES/elicitd.mo",
        ]
        .map(String::from),
    );
    for file in &expected {
        assert!(root.join(file).is_file(), "{file} is not installed");
    }
    let elicitd = root.join("bin/elicitd");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&elicitd).expect("stat").permissions());
    assert_eq!(mode & 0o777, 0o755);

    let unit = read(&root.join("lib/systemd/user/elicitd.service"));
    assert!(unit.contains("\nExecStart=/usr/bin/elicitd "), "{unit}");
    assert!(unit.contains("\nBusName=dev.elicitd.Broker\n"), "{unit}");
    let service = read(&root.join("share/dbus-1/services/dev.elicitd.Broker.service"));
    assert!(service.contains("\nExec=/usr/bin/elicitd\n"), "{service}");
    assert!(service.contains("\nName=dev.elicitd.Broker\n"), "{service}");
    assert!(
        service.contains("\nSystemdService=elicitd.service\n"),
        "{service}"
    );
    for text in [&unit, &service] {
        assert!(
            !text.contains(&*stage.path().to_string_lossy()),
            "DESTDIR leaked: {text}"
        );
    }
    // The pages are the real ones: generated from the binaries' options.
    let page = read(&root.join("share/man/man1/elicitd.1"));
    assert!(page.contains("state\\-dir"), "{page}");
    assert!(!read(&root.join("share/man/man1/elicit.1")).contains("generate"));
}

#[test]
fn systemd_analyze_verifies_the_units() {
    if Command::new("systemd-analyze").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "systemd-analyze is missing: install the Debian package systemd (tests/setup does)"
        );
        eprintln!("\n!!! SKIPPED: systemd-analyze is not installed (Debian package systemd) !!!\n");
        return;
    }
    // A real prefix, so that the unit's ExecStart names an existing binary.
    let prefix = tempfile::tempdir().expect("temp dir");
    install(prefix.path(), None);
    let runtime = tempfile::tempdir().expect("temp dir");
    let output: Output = Command::new("systemd-analyze")
        .args(["verify", "--user", "--man=no"])
        .arg(prefix.path().join("lib/systemd/user/elicitd.service"))
        .arg(prefix.path().join("lib/systemd/user/elicitd.socket"))
        // A user manager needs a runtime directory, even to verify.
        .env("XDG_RUNTIME_DIR", runtime.path())
        .output()
        .expect("systemd-analyze runs");
    let complaints = text(&output.stderr);
    assert!(
        output.status.success() && complaints.trim().is_empty(),
        "{complaints}"
    );
}

/// Stops the daemon the bus started should the test fail: the daemon
/// leaves with its bus, but the test may stop before the bus does.
struct Activated(u32);

impl Drop for Activated {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.0.to_string()).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_installed_service_file_starts_elicitd_on_the_first_call() {
    let prefix = tempfile::tempdir().expect("temp dir");
    install(prefix.path(), None);
    let services = prefix.path().join("share/dbus-1/services");
    let home = tempfile::tempdir().expect("temp dir");
    let (state, config) = (home.path().join("state"), home.path().join("config"));
    // The bus passes its environment to what it activates: the daemon keeps
    // its state and finds its config in the test's folders.
    let bus = PrivateBus::start_with_env(
        &format!("<servicedir>{}</servicedir>", services.display()),
        &[("XDG_STATE_HOME", &state), ("XDG_CONFIG_HOME", &config)],
    );
    let conn = bus.connect().await;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.expect("bus proxy");
    let name = zbus::names::BusName::try_from(BUS_NAME).expect("name");
    assert!(
        !dbus.name_has_owner(name.clone()).await.expect("NameHasOwner"),
        "nothing runs yet"
    );

    let schema = home.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#,
    )
    .expect("schema");
    let ask = tokio::process::Command::new(binary("elicit"))
        .args(["--bus", bus.address(), "ask", "--message", "Go on?", "--schema"])
        .arg(&schema)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit ask");

    eventually("the bus to start elicitd", || {
        let (dbus, name) = (dbus.clone(), name.clone());
        async move { dbus.name_has_owner(name).await.unwrap_or(false) }
    })
    .await;
    let pid = dbus
        .get_connection_unix_process_id(name.clone())
        .await
        .expect("the daemon's pid");
    let _activated = Activated(pid);
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the daemon's binary");
    assert_eq!(
        exe,
        prefix.path().join("bin/elicitd"),
        "the installed binary runs"
    );
    assert!(
        state.join("elicitd").is_dir(),
        "the daemon keeps its state in XDG_STATE_HOME"
    );

    let broker = elicit_proto::dbus::Broker1Proxy::new(&conn)
        .await
        .expect("broker proxy");
    let id = within("the form to be queued", async {
        loop {
            let listed = broker.list_forms().await.unwrap_or_default();
            let forms: Vec<Value> = serde_json::from_str(&listed).unwrap_or_default();
            if let Some(form) = forms.first() {
                break form["id"].to_string().trim_matches('"').to_owned();
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    let answer = tokio::process::Command::new(binary("elicit"))
        .args([
            "--bus",
            bus.address(),
            "answer",
            &id,
            "--accept",
            r#"{"ok": true}"#,
        ])
        .output()
        .await
        .expect("elicit answer");
    assert!(answer.status.success(), "{}", text(&answer.stderr));
    let asked = within("elicit ask to print the answer", ask.wait_with_output())
        .await
        .expect("elicit ask");
    assert!(asked.status.success(), "{asked:?}");
    let printed: Value = serde_json::from_slice(&asked.stdout).expect("JSON answer");
    assert_eq!(printed["action"], "accept");
    assert_eq!(printed["content"]["ok"], true);
}

/// Runs `elicitd` with a config it refuses, standard error into a file,
/// `JOURNAL_STREAM` naming that file when `journal`; returns what it logged.
fn refused_config_log(journal: bool) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[broker]\nno-such-key = 1\n").expect("config");
    let log_path = dir.path().join("stderr");
    let log = std::fs::File::create(&log_path).expect("log file");
    let meta = log.metadata().expect("stat");
    let mut command = Command::new(binary("elicitd"));
    command
        .arg("--config")
        .arg(&config)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stderr(log)
        .env_remove("JOURNAL_STREAM");
    if journal {
        use std::os::unix::fs::MetadataExt;
        command.env("JOURNAL_STREAM", format!("{}:{}", meta.dev(), meta.ino()));
    }
    let status = command.status().expect("elicitd runs");
    assert!(!status.success(), "a refused config stops the daemon");
    read(&log_path)
}

#[test]
fn logs_carry_journal_priorities_only_when_stderr_is_the_journal() {
    let journal = refused_config_log(true);
    assert!(journal.starts_with("<3>"), "an error at priority 3: {journal}");
    assert!(journal.contains("no-such-key"), "{journal}");
    assert!(
        !journal.contains("Z  ERROR"),
        "the journal stamps lines itself: {journal}"
    );
    let plain = refused_config_log(false);
    assert!(!plain.contains("<3>") && plain.contains("ERROR"), "{plain}");
}

/// An installed program finds the catalogues in its own prefix
/// (`PREFIX/share/locale` beside `PREFIX/bin`), with no variable set.
#[test]
fn an_installed_program_speaks_the_users_language() {
    let prefix = tempfile::tempdir().expect("temp dir");
    install(prefix.path(), None);
    let rules = tempfile::tempdir().expect("temp dir");
    std::fs::write(rules.path().join("10-broken.rhai"), "this is not rhai (").expect("write a rule");
    let mut env = elicit_tests::language_env("de_DE.UTF-8");
    env.retain(|(name, _)| *name != "ELICITD_LOCALEDIR");
    let output = Command::new(prefix.path().join("bin/elicit"))
        .args(["policy", "check", "--rules-dir"])
        .arg(rules.path())
        .envs(env)
        .env_remove("ELICITD_LOCALEDIR")
        .output()
        .expect("the installed elicit runs");
    let printed = text(&output.stdout);
    assert!(printed.starts_with("defekt  "), "{printed}");
}
