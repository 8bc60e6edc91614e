//! Helpers shared by the screen and plain-mode tests.

#![allow(dead_code)]

pub mod screen;

use std::path::PathBuf;

use elicit_proto::dbus::Origin;
use elicit_tui::ShowRequest;
use serde_json::Value;

/// A `Show` call for `request`, from `server` for `host`.
pub fn show(form: &str, server: &str, host: &str, request: &Value) -> ShowRequest {
    ShowRequest {
        form: form.into(),
        token: format!("token-{form}"),
        request_json: request.to_string(),
        origin: Origin {
            server: Some(server.into()),
            host: Some(host.into()),
            cwd: Some("/home/ann/project".into()),
            ..Origin::default()
        },
        session: format!("session-{form}"),
        queued_at_ms: 1_000_000,
        deadline_ms: 0,
    }
}

fn vectors_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ELICIT_VECTORS") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
}

/// The valid request vectors: (name, params).
pub fn valid_requests() -> Vec<(String, Value)> {
    let path = vectors_dir().join("requests.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the shared vectors must be present at {}: {e}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text).expect("requests.json is JSON");
    cases
        .into_iter()
        .filter(|c| c["valid"] == Value::Bool(true))
        .map(|c| {
            (
                c["name"].as_str().expect("a name").to_owned(),
                c["params"].clone(),
            )
        })
        .collect()
}

/// One valid request vector by name.
pub fn request(name: &str) -> Value {
    valid_requests()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no valid request vector {name}"))
        .1
}
