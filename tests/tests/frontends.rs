//! Front-end choice in the daemon: `Broker1.PassOn` and the front-end
//! programs of `[frontends]` with their conditions.

use std::path::{Path, PathBuf};

use elicit_client::ClientSession;
use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, Origin};
use elicit_tests::{Daemon, PrivateBus, TestFrontend, eventually, within};
use serde_json::{Value, json};

const NAME_FORM: &str = r#"{"message": "Your name?", "requestedSchema": {"type": "object",
  "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}}"#;

async fn session(bus: &PrivateBus) -> (zbus::Connection, ClientSession) {
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some("frontends-test".into()),
        ..Origin::default()
    };
    let session = ClientSession::open(&conn, &origin).await.expect("open session");
    (conn, session)
}

async fn forms(conn: &zbus::Connection) -> Vec<Value> {
    let broker = Broker1Proxy::new(conn).await.expect("proxy");
    serde_json::from_str(&broker.list_forms().await.expect("list")).expect("JSON")
}

fn pass_on_error(result: zbus::Result<()>) -> Error {
    Error::from(result.expect_err("refused"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_on_hands_the_form_on_and_never_back() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "[frontends]\npreference = [\"notify\", \"tui\"]\n").await;
    let mut notify = TestFrontend::register(&bus, "notify", 0).await;
    let mut tui = TestFrontend::register(&bus, "tui", 0).await;
    let (conn, mut client) = session(&bus).await;
    let path = client.submit(NAME_FORM, None, None).await.expect("submit");
    let shown = notify.next_show().await;

    // Only the holder of the token may pass the form on.
    let stranger = Broker1Proxy::new(&conn).await.expect("proxy");
    let error = pass_on_error(stranger.pass_on(&shown.form, &shown.token).await);
    assert!(matches!(error, Error::AccessDenied(_)), "{error:?}");
    let error = pass_on_error(tui.broker().pass_on(&shown.form, &shown.token).await);
    assert!(matches!(error, Error::AccessDenied(_)), "{error:?}");
    let error = pass_on_error(notify.broker().pass_on(&shown.form, "not-the-token").await);
    assert!(matches!(error, Error::AccessDenied(_)), "{error:?}");
    let error = pass_on_error(notify.broker().pass_on("999", &shown.token).await);
    assert!(matches!(error, Error::NotFound(_)), "{error:?}");

    notify
        .broker()
        .pass_on(&shown.form, &shown.token)
        .await
        .expect("pass on");
    let at_tui = tui.next_show().await;
    assert_eq!(at_tui.form, shown.form);
    // The old token is void.
    let error = notify
        .answer(&shown, "accept", json!({"name": "x"}))
        .await
        .expect_err("stale token");
    assert!(matches!(error, Error::AccessDenied(_)), "{error:?}");

    // The tui passes it on too: nobody is left (notify passed it), so it
    // waits, queued, and notify is not shown it again.
    tui.broker()
        .pass_on(&at_tui.form, &at_tui.token)
        .await
        .expect("pass on");
    let listed = forms(&conn).await;
    assert_eq!(listed[0]["state"], "queued", "{listed:?}");
    assert_eq!(listed[0]["presented-to"], Value::Null);

    // A front-end that registers later takes it.
    let gtk = {
        let mut gtk = TestFrontend::register(&bus, "gtk", 0).await;
        let shown = gtk.next_show().await;
        gtk.answer(&shown, "accept", json!({"name": "Ann"}))
            .await
            .expect("answer");
        gtk
    };
    let outcome = within("the outcome", client.wait(&path)).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "Ann"})));
    drop(gtk);
    assert!(
        notify.is_idle() && tui.is_idle(),
        "nobody else was shown the form"
    );
}

/// A config whose programs each record their name in `dir/started` when
/// started.
fn programs(dir: &Path, programs: &[(&str, &str)]) -> (String, PathBuf) {
    let started = dir.join("started");
    let mut config = String::from("[frontends]\npreference = [\"gtk\", \"notify\", \"tui\"]\n");
    for (name, when) in programs {
        let command = match *name {
            // A program that is not installed is skipped for the next.
            "missing" => "[\"/nonexistent/elicit-missing\"]".to_owned(),
            _ => format!("[\"sh\", \"-c\", \"echo {name} >> '{}'\"]", started.display()),
        };
        config.push_str(&format!(
            "[[frontends.program]]\nname = \"{name}\"\ncommand = {command}\nwhen = \"{when}\"\n"
        ));
    }
    (config, started)
}

async fn started_programs(started: &Path) -> Vec<String> {
    // `>>` creates the file before `echo` writes to it: wait for a line.
    eventually("a front-end program to start", || async {
        std::fs::read_to_string(started).is_ok_and(|text| text.ends_with('\n'))
    })
    .await;
    // A program that exits at once may be started again by a later
    // dispatch: which programs ran is what counts.
    let mut names: Vec<String> = std::fs::read_to_string(started)
        .expect("read")
        .lines()
        .map(str::to_owned)
        .collect();
    names.dedup();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_program_whose_condition_holds_is_started() {
    let config_programs = [
        ("missing", "always"),
        ("gtk", "display"),
        ("notify", "wayland"),
        ("tui", "always"),
    ];
    // With an X display: gtk (missing is unlisted, so it comes last).
    let bus = PrivateBus::start();
    let (config, started) = programs(bus.dir(), &config_programs);
    let _daemon = Daemon::start_with_env(
        &bus,
        &config,
        &[("DISPLAY", Some(":99")), ("WAYLAND_DISPLAY", None)],
    )
    .await;
    let (_conn, client) = session(&bus).await;
    client.submit(NAME_FORM, None, None).await.expect("submit");
    assert_eq!(started_programs(&started).await, ["gtk"]);

    // Headless: neither display condition holds, so tui.
    let bus = PrivateBus::start();
    let (config, started) = programs(bus.dir(), &config_programs);
    let _daemon =
        Daemon::start_with_env(&bus, &config, &[("DISPLAY", None), ("WAYLAND_DISPLAY", None)]).await;
    let (_conn, client) = session(&bus).await;
    client.submit(NAME_FORM, None, None).await.expect("submit");
    assert_eq!(started_programs(&started).await, ["tui"]);

    // Only a program that is not installed applies: nothing starts, and
    // the form waits.
    let bus = PrivateBus::start();
    let (config, started) = programs(bus.dir(), &[("missing", "always"), ("gtk", "display")]);
    let daemon = Daemon::start_with_env(&bus, &config, &[("DISPLAY", None), ("WAYLAND_DISPLAY", None)]).await;
    let (conn, client) = session(&bus).await;
    client.submit(NAME_FORM, None, None).await.expect("submit");
    eventually("the daemon to find no program installed", || async {
        daemon.log().contains("no front-end program applies")
    })
    .await;
    assert!(!started.exists());
    assert_eq!(forms(&conn).await[0]["state"], "queued");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passed_on_form_starts_the_next_program_not_the_passer() {
    let bus = PrivateBus::start();
    let (config, started) = programs(bus.dir(), &[("notify", "always"), ("tui", "always")]);
    let _daemon = Daemon::start(&bus, &config).await;
    // notify is registered: a form goes to it, and no program starts.
    let mut notify = TestFrontend::register(&bus, "notify", 0).await;
    let (conn, client) = session(&bus).await;
    client.submit(NAME_FORM, None, None).await.expect("submit");
    let shown = notify.next_show().await;
    assert!(!started.exists(), "a registered front-end shows the form");
    notify
        .broker()
        .pass_on(&shown.form, &shown.token)
        .await
        .expect("pass on");
    // The notify program is skipped (notify passed the form on), so tui.
    assert_eq!(started_programs(&started).await, ["tui"]);
    assert_eq!(forms(&conn).await[0]["state"], "queued");
    assert!(notify.is_idle());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_program_stops_the_daemon_with_the_key_named() {
    let bus = PrivateBus::start();
    let config = bus.dir().join("bad.toml");
    std::fs::write(
        &config,
        "[[frontends.program]]\nname = \"gtk\"\ncommand = []\nwhen = \"display\"\n",
    )
    .expect("write");
    let output = tokio::process::Command::new(elicit_tests::binary("elicitd"))
        .arg("--bus")
        .arg(bus.address())
        .arg("--state-dir")
        .arg(bus.dir().join("state"))
        .arg("--config")
        .arg(&config)
        .output();
    let output = within("elicitd to refuse the config", output)
        .await
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("frontends.program[0].command"), "{stderr}");
}
