//! `elicit check` as a server author runs it: files, standard input, exit
//! statuses, and the size cap.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn elicit(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_elicit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("elicit starts");
    // A child that exits early closes its stdin; that is not a failure here.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    child.wait_with_output().expect("elicit ends")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CONTACT: &str = r#"{"message": "Who?", "requestedSchema": {"type": "object",
  "properties": {"name": {"type": "string", "title": "Name"}, "age": {"type": "integer", "minimum": 0}},
  "required": ["name"]}}"#;

#[test]
fn valid_request_prints_the_form() {
    let out = elicit(&["check", "-"], CONTACT.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("valid form"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("name") && l.contains("text") && l.contains("required"))
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("age") && l.contains("integer") && l.contains("optional"))
    );
}

#[test]
fn invalid_request_names_property_and_rule() {
    let out = elicit(
        &["check", "-", "--json"],
        br#"{"message": "x", "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"][0]["location"], "property `a`");
    assert_eq!(report["errors"][0]["rule"], "nested-object");
}

#[test]
fn answers_are_checked_per_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let request = dir.path().join("request.json");
    std::fs::write(&request, CONTACT).expect("write");
    let path = request.to_str().expect("utf-8 path");
    let good = elicit(
        &["check", path, "--answer", "-"],
        br#"{"action": "accept", "content": {"name": "Ann"}}"#,
    );
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stdout));
    let bad = elicit(
        &["check", path, "--answer", "-"],
        br#"{"action": "accept", "content": {"age": -1, "extra": true}}"#,
    );
    assert_eq!(bad.status.code(), Some(1));
    let stdout = text(&bad.stdout);
    for expected in [
        "`name`: is required",
        "`age`: must be at least 0",
        "`extra`: was not asked for",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?} in {stdout}");
    }
    let declined = elicit(&["check", path, "--answer", "-"], br#"{"action": "decline"}"#);
    assert_eq!(declined.status.code(), Some(0));
}

#[test]
fn malformed_and_empty_input_are_usage_errors() {
    let out = elicit(&["check", "-"], b"{\"message\": ");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("standard input is not JSON"),
        "{}",
        text(&out.stderr)
    );
    let out = elicit(&["check", "-"], b"  \n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("empty"));
    let out = elicit(&["check", "/nonexistent/request.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot open"));
    let out = elicit(&["check", "-", "--answer", "-"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_ten_megabyte_file_is_refused_quickly_without_reading_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let big = dir.path().join("big.json");
    let file = std::fs::File::create(&big).expect("create");
    // A sparse file: refusing it from its size alone is the point.
    file.set_len(10 * 1024 * 1024).expect("grow");
    let started = Instant::now();
    let out = elicit(&["check", big.to_str().expect("utf-8 path")], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("more than the limit"),
        "{}",
        text(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // The same on standard input: refused after the cap, not after 10 MB.
    let out = elicit(&["check", "-"], &vec![b' '; 10 * 1024 * 1024]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("more than the limit"));
}

#[test]
fn choices_outside_strings_are_refused_with_the_keyword_named() {
    for (schema, keyword) in [
        (
            r#"{"type":"number","oneOf":[{"const":1,"title":"one"}]}"#,
            "oneOf",
        ),
        (r#"{"type":"integer","enum":[1,2]}"#, "enum"),
        (
            r#"{"type":"string","anyOf":[{"const":"a","title":"A"}]}"#,
            "anyOf",
        ),
    ] {
        let request = format!(
            r#"{{"message":"m","requestedSchema":{{"type":"object","properties":{{"a":{schema}}}}}}}"#
        );
        let out = elicit(&["check", "-"], request.as_bytes());
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{schema}: {stdout}");
        assert!(
            stdout.contains(&format!("`{keyword}`")) && stdout.contains("[unsupported-keyword]"),
            "{schema}: {stdout}"
        );
    }
}

#[test]
fn an_unknown_action_is_an_invalid_answer_not_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let answer = dir.path().join("answer.json");
    std::fs::write(&answer, r#"{"action": "maybe"}"#).expect("write");
    let path = answer.display().to_string();
    let out = elicit(&["check", "-", "--answer", &path], CONTACT.as_bytes());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("unknown action \"maybe\""), "{stdout}");
}

#[test]
fn an_answer_is_checked_with_the_defaults_the_broker_fills() {
    let request = r#"{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","default":2}},"required":["n"]}}"#;
    let dir = tempfile::tempdir().expect("temp dir");
    let answer = dir.path().join("answer.json");
    std::fs::write(&answer, r#"{"action": "accept", "content": {}}"#).expect("write");
    let path = answer.display().to_string();
    let out = elicit(&["check", "-", "--answer", &path], request.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
