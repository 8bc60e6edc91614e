//! The headers each era asks for on every message.
//!
//! 2025 eras: `MCP-Protocol-Version` (the negotiated one) after
//! `initialize`, and `Mcp-Session-Id` once the server gave one.
//! 2026-07-28: no session; every POST mirrors its method (`Mcp-Method`),
//! its target (`Mcp-Name`), and each tool argument the tool's schema marks
//! with `x-mcp-header` (`Mcp-Param-{Name}`), so that intermediaries can
//! route without reading the body. A server rejects a missing or
//! mismatched one.

use std::collections::HashMap;

use base64::Engine;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

/// Which transport rules the connection follows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Era {
    /// Nothing sent yet.
    #[default]
    Unknown,
    /// 2025-06-18 or 2025-11-25: a session opened by `initialize`; the
    /// version is the negotiated one, once known.
    Session(Option<String>),
    /// 2026-07-28 or later: stateless, the version in every request's
    /// `_meta`.
    Stateless(String),
}

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Session-Id`.
pub const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `Mcp-Method`.
pub const METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
pub const NAME: HeaderName = HeaderName::from_static("mcp-name");
/// `Last-Event-ID`.
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The arguments of one tool mirrored into headers: (argument, header).
pub type ParamHeaders = Vec<(String, HeaderName)>;

/// Reads the `x-mcp-header` marks of every tool of a `tools/list` result.
/// A mark that is not a valid header name is left out (the spec has the
/// client reject such a tool; the server will then reject the call, which
/// says more than a silent drop would).
pub fn param_headers(result: &Value) -> HashMap<String, ParamHeaders> {
    let tools = result
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    tools
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            let properties = tool.get("inputSchema")?.get("properties")?.as_object()?;
            let marks: ParamHeaders = properties
                .iter()
                .filter_map(|(argument, schema)| {
                    let mark = schema.get("x-mcp-header")?.as_str()?;
                    let header = HeaderName::try_from(format!("mcp-param-{mark}")).ok()?;
                    Some((argument.clone(), header))
                })
                .collect();
            (!marks.is_empty()).then(|| (name.to_owned(), marks))
        })
        .collect()
}

/// The 2026-07-28 headers of one message: its method, its target, and its
/// marked arguments.
pub fn stateless_headers(message: &Value, marks: Option<&ParamHeaders>, headers: &mut HeaderMap) {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return;
    };
    if let Ok(value) = HeaderValue::try_from(method) {
        headers.insert(METHOD, value);
    }
    let params = message.get("params");
    let target = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    if let Some(value) = target.and_then(Value::as_str).map(encode) {
        headers.insert(NAME, value);
    }
    let arguments = params.and_then(|p| p.get("arguments"));
    for (argument, header) in marks.into_iter().flatten() {
        let value = match arguments.and_then(|a| a.get(argument)) {
            Some(Value::String(text)) => encode(text),
            Some(Value::Bool(b)) => HeaderValue::from_static(if *b { "true" } else { "false" }),
            Some(Value::Number(n)) => match HeaderValue::try_from(n.to_string()) {
                Ok(value) => value,
                Err(_) => continue,
            },
            // Absent or null: no header at all.
            _ => continue,
        };
        headers.insert(header.clone(), value);
    }
}

/// A header value for `text`: as it is when it is plain visible ASCII
/// without edge spaces, else the spec's `=?base64?…?=` sentinel.
pub fn encode(text: &str) -> HeaderValue {
    let plain = !text.is_empty()
        && text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.starts_with("=?base64?");
    let encoded;
    let text = if plain {
        text
    } else {
        encoded = format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        );
        &encoded
    };
    HeaderValue::try_from(text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The text a header value stands for: the `=?base64?…?=` sentinel
/// decoded (standard alphabet, UTF-8, the markers case-sensitive as the
/// spec writes them), any other value as it is. An `Err` says why a
/// sentinel does not decode.
pub fn decode(value: &str) -> Result<std::borrow::Cow<'_, str>, String> {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(std::borrow::Cow::Borrowed(value));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .map_err(|error| format!("its base64 does not decode: {error}"))?;
    String::from_utf8(bytes)
        .map(std::borrow::Cow::Owned)
        .map_err(|_| "its decoded bytes are not UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_mirrors_method_name_and_marked_arguments() {
        let tools = json!({"tools": [{"name": "query", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "text": {"type": "string"}
        }}}]});
        let marks = param_headers(&tools);
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "query", "arguments": {"region": "zürich", "limit": 5, "text": "x"}}});
        let mut headers = HeaderMap::new();
        stateless_headers(&call, marks.get("query"), &mut headers);
        assert_eq!(headers["mcp-method"], "tools/call");
        assert_eq!(headers["mcp-name"], "query");
        assert_eq!(headers["mcp-param-region"], "=?base64?esO8cmljaA==?=");
        assert_eq!(headers["mcp-param-limit"], "5");
        assert!(
            !headers.contains_key("mcp-param-dry"),
            "an absent argument has no header"
        );
    }

    #[test]
    fn a_resource_read_names_its_uri() {
        let read =
            json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "file:///a"}});
        let mut headers = HeaderMap::new();
        stateless_headers(&read, None, &mut headers);
        assert_eq!(headers["mcp-name"], "file:///a");
    }

    #[test]
    fn header_values_decode_as_they_were_encoded() {
        for text in ["plain", "naïve tool", " edge ", "=?base64?looks?="] {
            let encoded = encode(text);
            let decoded = decode(encoded.to_str().unwrap_or_default());
            assert_eq!(decoded.as_deref(), Ok(text), "{encoded:?}");
        }
        // The spec's own example.
        assert_eq!(
            decode("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").as_deref(),
            Ok("=?base64?literal?=")
        );
        assert!(decode("=?base64?not base64!?=").is_err());
        assert!(decode("=?base64?/w==?=").is_err(), "not UTF-8");
        // Markers in another case are not the sentinel.
        assert_eq!(decode("=?BASE64?eA==?=").as_deref(), Ok("=?BASE64?eA==?="));
    }
}
