//! Helpers shared by the policy tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use elicit_proto::dbus::Origin;
use elicit_proto::{Elicitation, Limits, Mode};
use elicitd_policy::{Decision, Policy};
use serde_json::{Value, json};

/// A checked form request from its `requestedSchema`.
pub fn form(schema: Value) -> Elicitation {
    request(json!({"message": "Please fill this in", "requestedSchema": schema}))
}

/// A checked request from its params.
pub fn request(params: Value) -> Elicitation {
    Elicitation::from_value(params, &Limits::default()).expect("a valid request")
}

/// A form with one text field of this name, title and description.
pub fn text_field(name: &str, title: Option<&str>, description: Option<&str>) -> Elicitation {
    let mut property = json!({"type": "string"});
    if let Some(title) = title {
        property["title"] = json!(title);
    }
    if let Some(description) = description {
        property["description"] = json!(description);
    }
    form(json!({"type": "object", "properties": {name: property}}))
}

/// A confirmation: a form with no fields.
pub fn confirmation() -> Elicitation {
    form(json!({"type": "object", "properties": {}}))
}

/// A URL-mode request, built directly so that URLs the request check
/// refuses can reach the rules too.
pub fn url_request(url: &str) -> Elicitation {
    Elicitation {
        message: "Please open".into(),
        mode: Mode::Url {
            url: url::Url::parse(url).expect("a URL"),
            elicitation_id: None,
        },
        raw: json!({"mode": "url", "message": "Please open", "url": url}),
    }
}

/// An origin for `server`, optionally working in `cwd`.
pub fn origin(server: &str, cwd: Option<&str>) -> Origin {
    Origin {
        host: Some("test-host".into()),
        server: Some(server.into()),
        command: Some(format!("{server} --stdio")),
        cwd: cwd.map(str::to_owned),
        pid: Some(4242),
        ..Origin::default()
    }
}

/// Writes a rules file into `dir`, creating it.
pub fn write_rule(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the rules dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a rules file");
    path
}

/// Loads `dirs` and decides `request` from `server`.
pub fn decide(dirs: &[PathBuf], request: &Elicitation, server: &str) -> Decision {
    let policy = Policy::load(dirs).expect("the policy loads");
    policy.decide(request, &origin(server, None), "session-1")
}

/// Polls `check` until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        // A pause between polls, not a wait for the outcome: the deadline decides.
        std::thread::sleep(Duration::from_millis(10));
    }
    check()
}
