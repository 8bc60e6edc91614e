//! Era and capability rewriting: the server must see a client that can
//! elicit in form and URL mode, whatever the host declared, and the proxy
//! must remember what the host itself can do.

use serde_json::{Map, Value, json};

/// The `_meta` key of the protocol version on every 2026-07-28 request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client capabilities on every 2026-07-28 request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's name and version (2026-07-28).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the server's name and version on 2026-07-28 results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// What the host declared it can do itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCaps {
    /// Form-mode elicitation.
    pub form: bool,
    /// URL-mode elicitation.
    pub url: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `roots/list`.
    pub roots: bool,
}

impl HostCaps {
    /// Reads a `ClientCapabilities` object. `elicitation: {}` means form
    /// only (that is how 2025-06-18 hosts and the spec's default read it).
    pub fn from_capabilities(capabilities: Option<&Value>) -> HostCaps {
        let Some(caps) = capabilities.and_then(Value::as_object) else {
            return HostCaps::default();
        };
        let elicitation = caps.get("elicitation").and_then(Value::as_object);
        let (form, url) = match elicitation {
            None => (false, false),
            Some(e) if !e.contains_key("form") && !e.contains_key("url") => (true, false),
            Some(e) => (e.contains_key("form"), e.contains_key("url")),
        };
        HostCaps {
            form,
            url,
            sampling: caps.contains_key("sampling"),
            roots: caps.contains_key("roots"),
        }
    }

    /// Whether the host can answer an elicitation in `mode` itself.
    pub fn can_elicit(&self, mode: &str) -> bool {
        match mode {
            "url" => self.url,
            _ => self.form,
        }
    }

    /// Whether the host declared the capability a server→client `method`
    /// needs.
    pub fn can_serve(&self, method: &str) -> bool {
        match method {
            "sampling/createMessage" => self.sampling,
            "roots/list" => self.roots,
            _ => false,
        }
    }
}

/// Merges `elicitation: {form: {}, url: {}}` into a capabilities object,
/// keeping whatever the host declared (including its own keys inside
/// `elicitation`). Returns whether anything changed, so that an already
/// complete line can travel byte for byte.
pub fn merge_elicitation(capabilities: &mut Map<String, Value>) -> bool {
    let entry = capabilities.entry("elicitation").or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    let Some(elicitation) = entry.as_object_mut() else {
        return false;
    };
    let mut changed = false;
    for mode in ["form", "url"] {
        if !elicitation.contains_key(mode) {
            elicitation.insert(mode.into(), json!({}));
            changed = true;
        }
    }
    changed
}

/// Rewrites an `initialize` request's `params.capabilities`. Returns the
/// host's own capabilities (read before the merge) and whether the
/// message changed.
pub fn rewrite_initialize(message: &mut Value) -> (HostCaps, bool) {
    let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) else {
        return (HostCaps::default(), false);
    };
    let host = HostCaps::from_capabilities(params.get("capabilities"));
    let caps = params.entry("capabilities").or_insert_with(|| json!({}));
    if !caps.is_object() {
        *caps = json!({});
    }
    let changed = caps.as_object_mut().is_some_and(merge_elicitation);
    (host, changed)
}

/// The 2026-07-28 `_meta` of a request, when it names a protocol version.
pub fn modern_meta(message: &Value) -> Option<&Map<String, Value>> {
    let meta = message.get("params")?.get("_meta")?.as_object()?;
    meta.get(META_PROTOCOL_VERSION)?.as_str()?;
    Some(meta)
}

/// Rewrites `_meta[clientCapabilities]` of a 2026-07-28 request. Returns
/// the host's own capabilities and whether the message changed; `None`
/// when the request is not of that era.
pub fn rewrite_modern(message: &mut Value) -> Option<(HostCaps, bool)> {
    modern_meta(message)?;
    let meta = message.get_mut("params")?.get_mut("_meta")?.as_object_mut()?;
    let host = HostCaps::from_capabilities(meta.get(META_CLIENT_CAPABILITIES));
    let caps = meta.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| json!({}));
    if !caps.is_object() {
        *caps = json!({});
    }
    let changed = caps.as_object_mut().is_some_and(merge_elicitation);
    Some((host, changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_keeps_the_host_capabilities() {
        let mut m = json!({"id":1,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true},"elicitation":{}}}});
        let (host, changed) = rewrite_initialize(&mut m);
        assert!(changed);
        assert_eq!(
            host,
            HostCaps {
                form: true,
                url: false,
                sampling: false,
                roots: true
            }
        );
        assert_eq!(
            m["params"]["capabilities"],
            json!({"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}})
        );
        let (_, again) = rewrite_initialize(&mut m);
        assert!(!again, "a complete declaration is left alone");
    }

    #[test]
    fn modern_requests_get_the_capability_in_meta() {
        let mut m = json!({"id":1,"method":"tools/call","params":{"_meta":{
            META_PROTOCOL_VERSION:"2026-07-28", META_CLIENT_CAPABILITIES:{"sampling":{}}}}});
        let (host, changed) = rewrite_modern(&mut m).expect("modern");
        assert!(changed && host.sampling && !host.form);
        assert_eq!(
            m["params"]["_meta"][META_CLIENT_CAPABILITIES]["elicitation"],
            json!({"form":{},"url":{}})
        );
        assert!(rewrite_modern(&mut json!({"id":1,"method":"tools/list"})).is_none());
    }
}
