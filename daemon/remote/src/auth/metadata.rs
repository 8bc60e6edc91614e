//! The metadata documents (RFC 9728 protected resource metadata, RFC 8414
//! authorization server metadata, OpenID discovery) and where to look for
//! them: pure functions of URLs, tested here.

use serde::Deserialize;
use url::Url;

/// Protected resource metadata (RFC 9728 §2), the fields MCP uses.
#[derive(Debug, Clone, Deserialize)]
pub struct ResourceMetadata {
    /// The protected resource's identifier.
    pub resource: Option<String>,
    /// Issuers of the authorization servers it trusts.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource knows.
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2 / OpenID Discovery), the
/// fields this client uses.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerMetadata {
    /// The issuer identifier the document speaks for; it must be the one
    /// the document was fetched for (RFC 8414 §3.3).
    pub issuer: Option<String>,
    /// Whether authorization responses carry `iss` (RFC 9207), which
    /// must then be there and match.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// Where the user authorizes.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens become tokens.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591), if offered.
    pub registration_endpoint: Option<String>,
    /// Client authentication methods at the token endpoint; absent means
    /// `client_secret_basic` (RFC 8414 §2).
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Scopes the authorization server knows; `offline_access` among them
    /// means refresh tokens are asked for by scope.
    pub scopes_supported: Option<Vec<String>>,
    /// PKCE methods; MCP requires `S256` to be listed.
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents accepted as `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
}

impl ServerMetadata {
    /// The 2025-03-26 fallback for a server with no metadata at all: the
    /// endpoints at fixed paths of the MCP server's origin.
    pub fn fallback(origin: &Url) -> ServerMetadata {
        let at = |path: &str| {
            origin
                .join(path)
                .map(String::from)
                .unwrap_or_else(|_| path.to_owned())
        };
        ServerMetadata {
            issuer: None,
            authorization_response_iss_parameter_supported: false,
            authorization_endpoint: at("/authorize"),
            token_endpoint: at("/token"),
            registration_endpoint: Some(at("/register")),
            token_endpoint_auth_methods_supported: None,
            scopes_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            client_id_metadata_document_supported: false,
        }
    }
}

/// `url` with its path, query and fragment removed.
pub fn origin_of(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    origin
}

/// `url`'s path without its trailing slash; empty for the root.
fn path_of(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

/// `origin` + `well_known` + `suffix`, as a string (the suffix is a path
/// already percent-encoded by `Url`).
fn at_origin(url: &Url, well_known: &str, suffix: &str) -> String {
    let origin = origin_of(url);
    format!("{}{well_known}{suffix}", origin.as_str().trim_end_matches('/'))
}

/// Where to look for the protected resource metadata of `server`, in
/// order (MCP 2025-06-18 and later): the challenge's `resource_metadata`,
/// then the path-aware well-known URI, then the root one.
pub fn resource_metadata_candidates(server: &Url, from_challenge: Option<&str>) -> Vec<String> {
    let mut candidates = Vec::new();
    if let Some(url) = from_challenge
        && let Ok(parsed) = Url::parse(url)
        && matches!(parsed.scheme(), "https" | "http")
    {
        candidates.push(parsed.to_string());
    }
    let path = path_of(server);
    if !path.is_empty() {
        candidates.push(at_origin(server, "/.well-known/oauth-protected-resource", path));
    }
    candidates.push(at_origin(server, "/.well-known/oauth-protected-resource", ""));
    candidates.dedup();
    candidates
}

/// Where to look for the metadata of the authorization server `issuer`,
/// in order (MCP 2025-11-25): RFC 8414 with the path inserted, OpenID
/// Connect with the path inserted, OpenID Connect with the path
/// appended; for an issuer without a path, the two root documents.
pub fn server_metadata_candidates(issuer: &Url) -> Vec<String> {
    let path = path_of(issuer);
    if path.is_empty() {
        vec![
            at_origin(issuer, "/.well-known/oauth-authorization-server", ""),
            at_origin(issuer, "/.well-known/openid-configuration", ""),
        ]
    } else {
        vec![
            at_origin(issuer, "/.well-known/oauth-authorization-server", path),
            at_origin(issuer, "/.well-known/openid-configuration", path),
            format!(
                "{}{path}/.well-known/openid-configuration",
                at_origin(issuer, "", "")
            ),
        ]
    }
}

/// Whether the metadata's `resource` may stand for `server` (RFC 9728
/// §3.3, as MCP clients apply it): the same origin, and a path that is
/// the server's or one of its parents.
pub fn resource_covers(advertised: &str, server: &Url) -> bool {
    let Ok(advertised) = Url::parse(advertised) else {
        return false;
    };
    if advertised.scheme() != server.scheme()
        || advertised.host_str().map(str::to_ascii_lowercase)
            != server.host_str().map(str::to_ascii_lowercase)
        || advertised.port_or_known_default() != server.port_or_known_default()
    {
        return false;
    }
    let parent = path_of(&advertised);
    let path = path_of(server);
    path == parent || path.starts_with(&format!("{parent}/"))
}

/// Whether the metadata's `issuer` is the issuer `expected` it was
/// fetched for (RFC 8414 §3.3): the same string, or for an issuer with no
/// path the same but for the slash that URL parsers add (`https://as` and
/// `https://as/` name one issuer, and its metadata has one URL).
pub fn same_issuer(expected: &str, advertised: &str) -> bool {
    if expected == advertised {
        return true;
    }
    let bare = |text: &str| text.strip_suffix('/').unwrap_or(text).to_owned();
    bare(expected) == bare(advertised)
        && Url::parse(expected).is_ok_and(|url| url.path() == "/" && url.query().is_none())
}

/// 2025-03-26 discovery asks the MCP server's origin, which names no
/// issuer: its metadata's `issuer` must be on that origin (an
/// authorization server under a path of it is the server's own).
pub fn issuer_on_origin(advertised: &str, server: &Url) -> bool {
    Url::parse(advertised).is_ok_and(|issuer| {
        issuer.scheme() == server.scheme()
            && issuer.host_str().map(str::to_ascii_lowercase)
                == server.host_str().map(str::to_ascii_lowercase)
            && issuer.port_or_known_default() == server.port_or_known_default()
            && issuer.query().is_none()
            && issuer.fragment().is_none()
    })
}

/// The canonical URI of the MCP server (RFC 8707 §2, MCP "Canonical
/// Server URI"): no fragment, no trailing slash after a path.
pub fn canonical_resource(server: &Url) -> String {
    let mut canonical = server.clone();
    canonical.set_fragment(None);
    let text = canonical.to_string();
    // A slash inside a query is the query's own.
    if canonical.query().is_none() {
        text.trim_end_matches('/').to_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn resource_metadata_order() {
        assert_eq!(
            resource_metadata_candidates(&url("http://localhost:9/mcp"), None),
            [
                "http://localhost:9/.well-known/oauth-protected-resource/mcp",
                "http://localhost:9/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_candidates(
                &url("https://a.example/"),
                Some("https://a.example/custom/m.json")
            ),
            [
                "https://a.example/custom/m.json",
                "https://a.example/.well-known/oauth-protected-resource",
            ]
        );
        // Not a URL, or not HTTP: ignored.
        assert_eq!(
            resource_metadata_candidates(&url("https://a.example/x/"), Some("file:///etc/passwd")),
            [
                "https://a.example/.well-known/oauth-protected-resource/x",
                "https://a.example/.well-known/oauth-protected-resource",
            ]
        );
    }

    #[test]
    fn server_metadata_order() {
        assert_eq!(
            server_metadata_candidates(&url("https://auth.example")),
            [
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_candidates(&url("http://localhost:7/tenant1/")),
            [
                "http://localhost:7/.well-known/oauth-authorization-server/tenant1",
                "http://localhost:7/.well-known/openid-configuration/tenant1",
                "http://localhost:7/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_coverage() {
        let server = url("https://mcp.example/api/mcp");
        assert!(resource_covers("https://mcp.example/api/mcp", &server));
        assert!(resource_covers("https://mcp.example/api/mcp/", &server));
        assert!(resource_covers("https://MCP.example", &server));
        assert!(resource_covers("https://mcp.example:443/api", &server));
        assert!(!resource_covers("https://mcp.example/ap", &server));
        assert!(!resource_covers("https://mcp.example/api/mcp/more", &server));
        assert!(!resource_covers("http://mcp.example/api/mcp", &server));
        assert!(!resource_covers("https://evil.example/api/mcp", &server));
        assert!(!resource_covers("not a url", &server));
    }

    #[test]
    fn an_issuer_is_the_same_string_or_its_root_slash() {
        assert!(same_issuer("https://as.example", "https://as.example"));
        assert!(same_issuer("https://as.example", "https://as.example/"));
        assert!(same_issuer("https://as.example/", "https://as.example"));
        assert!(same_issuer("https://as.example/t1", "https://as.example/t1"));
        assert!(!same_issuer("https://as.example/t1", "https://as.example/t1/"));
        assert!(!same_issuer("https://as.example", "https://evil.example"));
        assert!(!same_issuer("https://as.example/t1", "https://as.example/t2"));
        assert!(!same_issuer("https://as.example", "https://AS.example"));
        assert!(!same_issuer("https://as.example", "http://as.example"));
    }

    #[test]
    fn a_legacy_issuer_is_on_the_servers_origin() {
        let server = url("http://localhost:3/deep/mcp");
        assert!(issuer_on_origin("http://localhost:3", &server));
        assert!(issuer_on_origin("http://localhost:3/oauth", &server));
        assert!(!issuer_on_origin("http://localhost:4", &server));
        assert!(!issuer_on_origin("https://localhost:3", &server));
        assert!(!issuer_on_origin("http://evil.example:3", &server));
        assert!(!issuer_on_origin("not a url", &server));
    }

    #[test]
    fn canonical_resources() {
        assert_eq!(
            canonical_resource(&url("https://Mcp.Example/mcp/#x")),
            "https://mcp.example/mcp"
        );
        assert_eq!(
            canonical_resource(&url("https://mcp.example")),
            "https://mcp.example"
        );
        assert_eq!(
            canonical_resource(&url("http://localhost:8/mcp")),
            "http://localhost:8/mcp"
        );
    }

    #[test]
    fn fallback_endpoints_are_at_the_origin() {
        let fallback = ServerMetadata::fallback(&origin_of(&url("http://localhost:3/deep/mcp")));
        assert_eq!(fallback.authorization_endpoint, "http://localhost:3/authorize");
        assert_eq!(fallback.token_endpoint, "http://localhost:3/token");
        assert_eq!(
            fallback.registration_endpoint.as_deref(),
            Some("http://localhost:3/register")
        );
    }
}
