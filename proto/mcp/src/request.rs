//! `elicitation/create` params: parsed, checked, and kept as sent.

use std::net::IpAddr;

use serde_json::Value;

use crate::error::{Location, SchemaError, SchemaErrors};
use crate::form::Form;
use crate::limits::Limits;
use crate::schema::{Patterns, kind_of, parse_schema};

/// A checked elicitation, ready to be queued and shown.
#[derive(Debug, Clone)]
pub struct Elicitation {
    /// What the server says to the user.
    pub message: String,
    /// Form or URL, with what each needs.
    pub mode: Mode,
    /// The params exactly as the server sent them; rmcp's types would drop
    /// `pattern` and unknown keys, so this is what travels and is stored.
    pub raw: Value,
}

/// The two elicitation modes.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Fields to fill in (every era).
    Form(Form),
    /// Consent to open a URL outside the agent (2025-11-25 and later).
    Url {
        /// The checked URL: https, or http to a loopback host.
        url: url::Url,
        /// The server's id for `notifications/elicitation/complete`;
        /// 2026-07-28 `inputRequests` leave it out.
        elicitation_id: Option<String>,
    },
}

impl Elicitation {
    /// Parses and checks params given as JSON text, refusing oversized text
    /// before parsing it.
    pub fn parse_str(text: &str, limits: &Limits) -> Result<Self, SchemaErrors> {
        if text.len() > limits.max_request_bytes {
            return Err(one(
                Location::Params,
                "request-too-large",
                format!(
                    "the request is {} bytes, more than the limit of {}",
                    text.len(),
                    limits.max_request_bytes
                ),
            ));
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| one(Location::Params, "not-json", format!("is not valid JSON: {e}")))?;
        Self::from_value(value, limits)
    }

    /// Reads params given as JSON text that passed [`Elicitation::parse_str`]
    /// before (see [`Elicitation::from_checked`]): what a front-end does
    /// with the request the broker shows it.
    pub fn parse_checked_str(text: &str, limits: &Limits) -> Result<Self, SchemaErrors> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| one(Location::Params, "not-json", format!("is not valid JSON: {e}")))?;
        Self::from_checked(value, limits)
    }

    /// Checks params already parsed as JSON.
    pub fn from_value(raw: Value, limits: &Limits) -> Result<Self, SchemaErrors> {
        Self::read(raw, limits, Patterns::Compile)
    }

    /// Reads params that passed [`Elicitation::from_value`] before: stored
    /// by the broker, or sent by it to a front-end. Sizes and the subset
    /// are checked again, which costs time in proportion to the text; but
    /// patterns are not compiled and defaults not matched against them,
    /// whose cost the server chose (a pattern may take milliseconds to
    /// compile): a restart with many forms stored answers at once.
    pub fn from_checked(raw: Value, limits: &Limits) -> Result<Self, SchemaErrors> {
        Self::read(raw, limits, Patterns::Trust)
    }

    fn read(raw: Value, limits: &Limits, patterns: Patterns) -> Result<Self, SchemaErrors> {
        let Some(params) = raw.as_object() else {
            return Err(one(
                Location::Params,
                "params-not-object",
                format!("must be a JSON object, not {}", kind_of(&raw)),
            ));
        };
        let mut errors = Vec::new();
        let message = match params.get("message") {
            Some(Value::String(m)) if m.len() > limits.max_message_bytes => {
                errors.push(SchemaError::new(
                    Location::Message,
                    "message-too-long",
                    format!(
                        "is {} bytes, more than the limit of {}",
                        m.len(),
                        limits.max_message_bytes
                    ),
                ));
                None
            }
            Some(Value::String(m)) => Some(m.clone()),
            Some(other) => {
                errors.push(SchemaError::new(
                    Location::Message,
                    "not-a-string",
                    format!("must be a string, not {}", kind_of(other)),
                ));
                None
            }
            None => {
                errors.push(SchemaError::new(Location::Message, "missing", "is required"));
                None
            }
        };
        let mode = match params.get("mode") {
            None => parse_form(params.get("requestedSchema"), limits, patterns, &mut errors),
            Some(Value::String(m)) if m == "form" => {
                parse_form(params.get("requestedSchema"), limits, patterns, &mut errors)
            }
            Some(Value::String(m)) if m == "url" => parse_url(params, limits, &mut errors),
            Some(other) => {
                errors.push(SchemaError::new(
                    Location::Mode,
                    "unknown-mode",
                    format!("must be \"form\" or \"url\", not {other}"),
                ));
                None
            }
        };
        match (message, mode) {
            (Some(message), Some(mode)) if errors.is_empty() => Ok(Elicitation { message, mode, raw }),
            _ => Err(SchemaErrors(errors)),
        }
    }

    /// The same elicitation without its JSON tree (`raw` becomes
    /// `Value::Null`), for a holder that keeps the params as text and needs
    /// only the checked form: a broker with thousands of forms queued.
    /// Rules see `raw`, so run them before.
    pub fn without_raw(mut self) -> Self {
        self.raw = Value::Null;
        self
    }

    /// The form, in form mode.
    pub fn form(&self) -> Option<&Form> {
        match &self.mode {
            Mode::Form(form) => Some(form),
            Mode::Url { .. } => None,
        }
    }

    /// `"form"` or `"url"`.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Form(_) => "form",
            Mode::Url { .. } => "url",
        }
    }
}

fn one(location: Location, rule: &'static str, detail: String) -> SchemaErrors {
    SchemaErrors(vec![SchemaError::new(location, rule, detail)])
}

fn parse_form(
    schema: Option<&Value>,
    limits: &Limits,
    patterns: Patterns,
    errors: &mut Vec<SchemaError>,
) -> Option<Mode> {
    let Some(schema) = schema else {
        errors.push(SchemaError::new(
            Location::Schema,
            "missing",
            "is required in form mode",
        ));
        return None;
    };
    parse_schema(schema, limits, patterns, errors).map(Mode::Form)
}

fn parse_url(
    params: &serde_json::Map<String, Value>,
    limits: &Limits,
    errors: &mut Vec<SchemaError>,
) -> Option<Mode> {
    let elicitation_id = match params.get("elicitationId") {
        None => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(other) => {
            errors.push(SchemaError::new(
                Location::ElicitationId,
                "not-a-string",
                format!("must be a string, not {}", kind_of(other)),
            ));
            return None;
        }
    };
    let text = match params.get("url") {
        Some(Value::String(text)) => text,
        Some(other) => {
            errors.push(SchemaError::new(
                Location::Url,
                "not-a-string",
                format!("must be a string, not {}", kind_of(other)),
            ));
            return None;
        }
        None => {
            errors.push(SchemaError::new(
                Location::Url,
                "missing",
                "is required in URL mode",
            ));
            return None;
        }
    };
    match check_url(text, limits) {
        Ok(url) => Some(Mode::Url { url, elicitation_id }),
        Err((rule, detail)) => {
            errors.push(SchemaError::new(Location::Url, rule, detail));
            None
        }
    }
}

/// Only URLs that are safe to offer for opening pass: https anywhere, plain
/// http only to this machine, and never with credentials that disguise the
/// real host (`https://bank.example@evil.example/`).
fn check_url(text: &str, limits: &Limits) -> Result<url::Url, (&'static str, String)> {
    if text.len() > limits.max_url_bytes {
        return Err((
            "url-too-long",
            format!(
                "is {} bytes, more than the limit of {}",
                text.len(),
                limits.max_url_bytes
            ),
        ));
    }
    let url = url::Url::parse(text).map_err(|e| ("bad-url", format!("does not parse as a URL: {e}")))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err((
                "url-scheme",
                "plain http is allowed only to the loopback host; use https".into(),
            ));
        }
        scheme => {
            return Err((
                "url-scheme",
                format!(
                    "the `{scheme}:` scheme must never be opened; only https (and http to loopback) may be"
                ),
            ));
        }
    }
    if url.host().is_none() {
        return Err(("bad-url", "has no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err((
            "url-credentials",
            "carries a user name or password before the host, which disguises where it leads".into(),
        ));
    }
    Ok(url)
}
