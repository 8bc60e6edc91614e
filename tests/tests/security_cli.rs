//! `elicit` as an attacker meets it: text from a hostile server or client
//! printed by `list`, `watch`, `history`, `check` and `policy` reaches the
//! terminal escaped; a closed standard output ends a command quietly; and
//! `elicit answer` takes answer values from a file or standard input, not
//! the command line.

use std::process::{Output, Stdio};

use elicit_client::ClientSession;
use elicit_proto::dbus::Origin;
use elicit_tests::{Daemon, PrivateBus, binary, eventually, within};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// OSC 0 (window title), OSC 52 (clipboard), CSI 2J (clear screen), the C1
/// CSI U+009B, DEL, a bidi override and a zero-width space.
const HOSTILE: &str =
    "A\u{1b}]0;pwned\u{7}B\u{1b}]52;c;cHduZWQ=\u{7}C\u{1b}[2JD\u{9b}31mE\u{7f}F\u{202e}G\u{200b}H";

/// Characters that must never reach a terminal raw.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\n' && elicit_proto::text::is_unsafe_char(c))
        .collect()
}

fn assert_safe(what: &str, text: &str) {
    let raw = raw_controls(text);
    assert!(raw.is_empty(), "{what} printed raw {raw:?}: {text:?}");
}

/// A form whose every string says something hostile: the message, a field
/// name, its title and description, a choice.
fn hostile_form() -> String {
    json!({
        "message": format!("message {HOSTILE}"),
        "requestedSchema": {"type": "object", "properties": {
            format!("field{HOSTILE}"): {"type": "string", "title": format!("title {HOSTILE}"), "description": format!("description {HOSTILE}")},
            "pick": {"type": "string", "enum": [format!("choice {HOSTILE}")]}
        }}
    })
    .to_string()
}

fn hostile_origin() -> Origin {
    Origin {
        host: Some(format!("host {HOSTILE}")),
        host_version: Some(format!("1 {HOSTILE}")),
        server: Some(format!("server {HOSTILE}")),
        server_version: Some(format!("2 {HOSTILE}")),
        command: Some(format!("command {HOSTILE}")),
        cwd: Some(format!("/tmp/{HOSTILE}")),
        ..Origin::default()
    }
}

/// Runs `elicit ARGS` against `bus`, with `stdin` as its standard input.
async fn elicit(bus: &PrivateBus, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = tokio::process::Command::new(binary("elicit"))
        .arg("--bus")
        .arg(bus.address())
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit starts");
    if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
        input.write_all(text.as_bytes()).await.expect("write stdin");
    }
    within(&format!("elicit {args:?}"), child.wait_with_output())
        .await
        .expect("elicit runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 errors")
}

async fn pending_ids(bus: &PrivateBus) -> Vec<String> {
    let output = elicit(bus, &["list", "--json"], None).await;
    let forms: Vec<Value> = serde_json::from_str(&stdout(&output)).expect("list --json is JSON");
    forms.iter().map(|f| f["id"].to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_is_escaped_in_every_human_output() {
    let bus = PrivateBus::start();
    let rules = bus.dir().join("rules.d");
    std::fs::create_dir_all(&rules).expect("rules dir");
    // A rule that quotes the server's words in its reason, and a broken
    // file whose very name is hostile.
    std::fs::write(
        rules.join("10-quote.rhai"),
        r#"rule("quote", |request, origin| { if request.message.starts_with("decline") { return decline(`because ${request.message} from ${origin.server}`); } });"#,
    )
    .expect("rule");
    std::fs::write(rules.join(format!("20-{HOSTILE}.rhai")), "rule(").expect("broken rule");
    let rules_dir = rules.display().to_string();
    let _daemon = Daemon::start(&bus, &format!("[policy]\nrules-dirs = [{rules_dir:?}]\n")).await;

    // `watch` runs throughout, as a person would leave it running.
    let mut watch = tokio::process::Command::new(binary("elicit"))
        .arg("--bus")
        .arg(bus.address())
        .arg("watch")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("watch starts");
    let mut watched = BufReader::new(watch.stdout.take().expect("watch stdout")).lines();
    let first = within("watch to subscribe", watched.next_line())
        .await
        .expect("read");
    assert_eq!(first.as_deref(), Some("watching form events"));

    let conn = bus.connect().await;
    let mut client = ClientSession::open(&conn, &hostile_origin())
        .await
        .expect("session");
    let kept = client.submit(&hostile_form(), None, None).await.expect("submit");
    let declined_request = json!({
        "message": format!("decline {HOSTILE}"),
        "requestedSchema": {"type": "object", "properties": {}}
    });
    let declined = client
        .submit(&declined_request.to_string(), None, None)
        .await
        .expect("submit");
    let outcome = within("the rule's decline", client.wait(&declined))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "decline");
    let secret_request = json!({
        "message": "m",
        "requestedSchema": {"type": "object", "properties": {format!("password{HOSTILE}"): {"type": "string"}}}
    });
    let secret = client
        .submit(&secret_request.to_string(), None, None)
        .await
        .expect("submit");
    let outcome = within("the guard's decline", client.wait(&secret))
        .await
        .expect("outcome");
    assert_eq!(outcome.action, "decline");

    // list, as a table and as JSON.
    eventually("the kept form listed", || async {
        pending_ids(&bus).await.len() == 1
    })
    .await;
    let list = elicit(&bus, &["list"], None).await;
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert_safe("elicit list", &text);
    assert!(text.contains("server A\\u{1b}]0;pwned\\u{7}B"), "{text}");
    assert!(text.contains("\\u{9b}") && text.contains("\\u{202e}"), "{text}");
    let list_json = elicit(&bus, &["list", "--json"], None).await;
    let text = stdout(&list_json);
    assert_safe("elicit list --json", &text);
    let forms: Vec<Value> = serde_json::from_str(&text).expect("still JSON");
    assert_eq!(
        forms[0]["origin"]["server"],
        format!("server {HOSTILE}"),
        "the same data"
    );

    // history, after the declined forms closed.
    let history = elicit(&bus, &["history"], None).await;
    let text = stdout(&history);
    assert_safe("elicit history", &text);
    assert!(text.contains("server A\\u{1b}"), "{text}");
    let history_json = elicit(&bus, &["history", "--json"], None).await;
    let text = stdout(&history_json);
    assert_safe("elicit history --json", &text);
    let records: Vec<Value> = serde_json::from_str(&text).expect("still JSON");
    assert!(!records.is_empty());

    // watch saw the declines, whose reasons quote the hostile words.
    let kept_id = pending_ids(&bus).await.remove(0);
    let answered = elicit(&bus, &["answer", &kept_id, "--cancel"], None).await;
    assert!(answered.status.success(), "{}", stderr(&answered));
    let mut seen = String::new();
    while !(seen.contains("because decline A\\u{1b}") && seen.contains("\"passwordA\\u{1b}")) {
        let line = tokio::time::timeout(elicit_tests::DEADLINE, watched.next_line()).await;
        let Ok(Ok(Some(line))) = line else {
            panic!("watch ended or stalled; it printed:\n{seen}");
        };
        seen.push_str(&line);
        seen.push('\n');
    }
    assert_safe("elicit watch", &seen);
    drop(watch);
    let _ = within("the kept form's outcome", client.wait(&kept)).await;

    // check, as text and JSON.
    let form_file = bus.dir().join("hostile.json");
    std::fs::write(&form_file, hostile_form()).expect("write form");
    let form_path = form_file.display().to_string();
    let check = elicit(&bus, &["check", &form_path], None).await;
    assert!(check.status.success(), "{}", stderr(&check));
    let text = stdout(&check);
    assert_safe("elicit check", &text);
    assert!(text.contains("fieldA\\u{1b}"), "{text}");
    let check_json = elicit(&bus, &["check", "--json", &form_path], None).await;
    assert_safe("elicit check --json", &stdout(&check_json));
    let bad_answer = bus.dir().join("answer.json");
    std::fs::write(
        &bad_answer,
        json!({"action": "accept", "content": {"pick": HOSTILE}}).to_string(),
    )
    .expect("write answer");
    let answer_path = bad_answer.display().to_string();
    let invalid = elicit(&bus, &["check", &form_path, "--answer", &answer_path], None).await;
    assert_eq!(invalid.status.code(), Some(1), "{}", stderr(&invalid));
    assert_safe("elicit check --answer", &stdout(&invalid));

    // policy test and policy check.
    let decline_file = bus.dir().join("decline.json");
    std::fs::write(&decline_file, declined_request.to_string()).expect("write request");
    let origin_file = bus.dir().join("origin.json");
    std::fs::write(
        &origin_file,
        json!({"server": format!("server {HOSTILE}")}).to_string(),
    )
    .expect("write origin");
    let tested = elicit(
        &bus,
        &[
            "policy",
            "test",
            &decline_file.display().to_string(),
            "--origin",
            &origin_file.display().to_string(),
            "--rules-dir",
            &rules_dir,
        ],
        None,
    )
    .await;
    let text = stdout(&tested);
    assert_safe("elicit policy test", &text);
    assert_safe("elicit policy test (errors)", &stderr(&tested));
    let verdict: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(verdict["verdict"], "decline", "{text}");
    let checked = elicit(&bus, &["policy", "check", "--rules-dir", &rules_dir], None).await;
    assert_eq!(checked.status.code(), Some(1));
    let text = stdout(&checked);
    assert_safe("elicit policy check", &text);
    assert!(text.contains("broken") && text.contains("20-A\\u{1b}"), "{text}");

    // Errors quote what they were given.
    let error = elicit(&bus, &["answer", HOSTILE, "--decline"], None).await;
    assert_eq!(error.status.code(), Some(1));
    assert_safe("elicit answer's error", &stderr(&error));
    assert!(stderr(&error).contains("\\u{1b}"), "{}", stderr(&error));
}

/// Runs `elicit ARGS` with a standard output whose reader is already gone,
/// and returns its exit code and what it wrote to standard error.
async fn with_closed_stdout(bus: &PrivateBus, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = tokio::process::Command::new(binary("elicit"))
        .arg("--bus")
        .arg(bus.address())
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit starts");
    let output = within(&format!("elicit {args:?} to end"), child.wait_with_output())
        .await
        .expect("elicit runs");
    (output.status.code(), stderr(&output))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_the_command_quietly() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let conn = bus.connect().await;
    let client = ClientSession::open(&conn, &hostile_origin())
        .await
        .expect("session");
    client.submit(&hostile_form(), None, None).await.expect("submit");
    eventually("the form listed", || async { pending_ids(&bus).await.len() == 1 }).await;
    for args in [
        &["list", "--json"][..],
        &["list"],
        &["history", "--json"],
        &["history"],
        &["watch"],
        &["watch", "--json"],
        &["status"],
    ] {
        let (code, errors) = with_closed_stdout(&bus, args).await;
        assert_eq!(code, Some(0), "elicit {args:?}: {errors}");
        assert!(errors.is_empty(), "elicit {args:?} wrote {errors:?}");
    }
}

const NAME_FORM: &str = r#"{"message": "Your name?", "requestedSchema": {"type": "object",
  "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_takes_values_from_a_file_or_stdin_and_warns_about_argv() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let conn = bus.connect().await;
    let origin = Origin {
        server: Some("names".into()),
        ..Origin::default()
    };
    let mut client = ClientSession::open(&conn, &origin).await.expect("session");

    // Standard input.
    let form = client.submit(NAME_FORM, None, None).await.expect("submit");
    eventually("the form listed", || async { pending_ids(&bus).await.len() == 1 }).await;
    let id = pending_ids(&bus).await.remove(0);
    let answered = elicit(
        &bus,
        &["answer", &id, "--accept-file", "-"],
        Some(r#"{"name": "Ada"}"#),
    )
    .await;
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert!(stderr(&answered).is_empty(), "{}", stderr(&answered));
    let outcome = within("the answer", client.wait(&form)).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "Ada"})));

    // A file.
    let form = client.submit(NAME_FORM, None, None).await.expect("submit");
    eventually("the form listed", || async { pending_ids(&bus).await.len() == 1 }).await;
    let id = pending_ids(&bus).await.remove(0);
    let file = bus.dir().join("answer.json");
    std::fs::write(&file, r#"{"name": "Grace"}"#).expect("write answer");
    let answered = elicit(
        &bus,
        &["answer", &id, "--accept-file", &file.display().to_string()],
        None,
    )
    .await;
    assert!(answered.status.success(), "{}", stderr(&answered));
    let outcome = within("the answer", client.wait(&form)).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "Grace"})));

    // A missing file is an error that leaves the form where it was.
    let form = client.submit(NAME_FORM, None, None).await.expect("submit");
    eventually("the form listed", || async { pending_ids(&bus).await.len() == 1 }).await;
    let id = pending_ids(&bus).await.remove(0);
    let missing = elicit(
        &bus,
        &["answer", &id, "--accept-file", "/nonexistent/answer.json"],
        None,
    )
    .await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("/nonexistent/answer.json"),
        "{}",
        stderr(&missing)
    );
    assert_eq!(pending_ids(&bus).await, std::slice::from_ref(&id));
    let not_json = elicit(&bus, &["answer", &id, "--accept-file", "-"], Some("name: Ada")).await;
    assert_eq!(not_json.status.code(), Some(1));
    assert!(
        stderr(&not_json).contains("standard input is not JSON"),
        "{}",
        stderr(&not_json)
    );
    assert_eq!(pending_ids(&bus).await, std::slice::from_ref(&id));

    // The command line still works, with a warning.
    let answered = elicit(&bus, &["answer", &id, "--accept", r#"{"name": "Linus"}"#], None).await;
    assert!(answered.status.success(), "{}", stderr(&answered));
    let warning = stderr(&answered);
    assert!(
        warning.contains("warning") && warning.contains("--accept-file"),
        "{warning}"
    );
    let outcome = within("the answer", client.wait(&form)).await.expect("outcome");
    assert_eq!(outcome.content, Some(json!({"name": "Linus"})));
}
