//! What a rule sees: the request and the origin as Rhai object maps.
//!
//! Absent values are `()`, never missing keys, so that a rule can test
//! `field.title == ()` and a misspelt key is still caught by nobody but the
//! author: Rhai returns `()` for unknown properties too.

use elicit_proto::dbus::Origin;
use elicit_proto::{Elicitation, Field, FieldKind, Mode};
use rhai::{Array, Dynamic, ImmutableString, Map};
use serde_json::Value;

/// `request`: `mode`, `message`, `url`, `scheme`, `host`, `fields`.
pub(crate) fn request(request: &Elicitation) -> Dynamic {
    let mut map = Map::new();
    map.insert("mode".into(), text(request.mode_name()));
    map.insert("message".into(), text(&request.message));
    let (url, scheme, host, fields) = match &request.mode {
        Mode::Url { url, .. } => (
            text(url.as_str()),
            text(url.scheme()),
            url.host_str().map_or(Dynamic::UNIT, text),
            Array::new(),
        ),
        Mode::Form(form) => (
            Dynamic::UNIT,
            Dynamic::UNIT,
            Dynamic::UNIT,
            form.fields.iter().map(|f| field(f, &request.raw)).collect(),
        ),
    };
    map.insert("url".into(), url);
    map.insert("scheme".into(), scheme);
    map.insert("host".into(), host);
    map.insert("fields".into(), Dynamic::from_array(fields));
    Dynamic::from_map(map)
}

/// One field: `name`, `title`, `label`, `description`, `kind`, `format`,
/// `required`, `choices`, `default`.
fn field(field: &Field, raw: &Value) -> Dynamic {
    // The normalised field folds the title into the label; rules judge the
    // server's own words, so they come from the request as sent.
    let property = raw
        .get("requestedSchema")
        .and_then(|schema| schema.get("properties"))
        .and_then(|properties| properties.get(&field.name));
    let raw_text = |key: &str| {
        property
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .map_or(Dynamic::UNIT, text)
    };
    let (kind, choices) = match &field.kind {
        FieldKind::Text { .. } => ("text", None),
        FieldKind::Number { integer: true, .. } => ("integer", None),
        FieldKind::Number { integer: false, .. } => ("number", None),
        FieldKind::Boolean => ("boolean", None),
        FieldKind::Choice { choices } => ("choice", Some(choices)),
        FieldKind::MultiChoice { choices, .. } => ("multi-choice", Some(choices)),
    };
    let mut map = Map::new();
    map.insert("name".into(), text(&field.name));
    map.insert("title".into(), raw_text("title"));
    map.insert("label".into(), text(&field.label));
    map.insert("description".into(), raw_text("description"));
    map.insert("kind".into(), text(kind));
    map.insert("format".into(), raw_text("format"));
    map.insert("required".into(), Dynamic::from_bool(field.required));
    let choices = choices.map_or(Dynamic::UNIT, |choices| {
        Dynamic::from_array(choices.iter().map(|c| text(&c.value)).collect())
    });
    map.insert("choices".into(), choices);
    let default = field
        .default
        .as_ref()
        .and_then(|value| rhai::serde::to_dynamic(value).ok())
        .unwrap_or(Dynamic::UNIT);
    map.insert("default".into(), default);
    Dynamic::from_map(map)
}

/// `origin`: `host`, `host_version`, `server`, `server_version`, `command`,
/// `cwd`, `pid` (what the client says), `hub`, `hub_cwd` (a host that runs
/// its servers from a detached hub: `cwd` is then unit, the hub's folder
/// is `hub_cwd`), `verified_exe`, `verified_args` (what
/// the proxy found and started), `caller_pid`, `caller_uid` (what the bus
/// verified), `remote` (asked through the asker socket, set by the daemon),
/// `session`.
pub(crate) fn origin(origin: &Origin, session: &str) -> Dynamic {
    let mut map = Map::new();
    let strings = [
        ("host", &origin.host),
        ("host_version", &origin.host_version),
        ("server", &origin.server),
        ("server_version", &origin.server_version),
        ("command", &origin.command),
        ("cwd", &origin.cwd),
        ("hub", &origin.hub),
        ("hub_cwd", &origin.hub_cwd),
        ("verified_exe", &origin.verified_exe),
    ];
    for (key, value) in strings {
        map.insert(key.into(), value.as_deref().map_or(Dynamic::UNIT, text));
    }
    let numbers = [
        ("pid", origin.pid),
        ("caller_pid", origin.caller_pid),
        ("caller_uid", origin.caller_uid),
    ];
    for (key, value) in numbers {
        map.insert(
            key.into(),
            value.map_or(Dynamic::UNIT, |n| Dynamic::from_int(i64::from(n))),
        );
    }
    map.insert("remote".into(), Dynamic::from_bool(origin.remote));
    let args = origin.verified_args.as_ref().map_or(Dynamic::UNIT, |args| {
        Dynamic::from_array(args.iter().map(|arg| text(arg)).collect())
    });
    map.insert("verified_args".into(), args);
    map.insert("session".into(), text(session));
    Dynamic::from_map(map)
}

fn text(value: &str) -> Dynamic {
    Dynamic::from(ImmutableString::from(value))
}
