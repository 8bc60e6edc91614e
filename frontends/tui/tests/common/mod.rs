//! Helpers shared by the screen and plain-mode tests.

#![allow(dead_code)]

pub mod screen;

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

/// The valid request vectors of every set (`elicit-vectors`): (name,
/// params), each named `SET: NAME`.
pub fn valid_requests() -> Vec<(String, Value)> {
    elicit_vectors::sets()
        .iter()
        .flat_map(valid_requests_of)
        .collect()
}

/// The valid request vectors of `set`: (name, params).
fn valid_requests_of(set: &elicit_vectors::VectorSet) -> Vec<(String, Value)> {
    set.load("requests.json")
        .into_iter()
        .filter(|c| c["valid"] == Value::Bool(true))
        .map(|c| {
            (
                format!("{}: {}", set.name(), c["name"].as_str().expect("a name")),
                c["params"].clone(),
            )
        })
        .collect()
}

/// One valid request vector of the in-repo set by name: the tests that
/// pick one by name were written against this copy.
pub fn request(name: &str) -> Value {
    elicit_vectors::in_repo()
        .load("requests.json")
        .into_iter()
        .find(|c| c["valid"] == Value::Bool(true) && c["name"] == name)
        .unwrap_or_else(|| panic!("no valid request vector {name}"))["params"]
        .clone()
}
