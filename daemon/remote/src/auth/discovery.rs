//! Finding the authorization server of an MCP server: protected resource
//! metadata first (2025-06-18 and later), then the authorization server's
//! metadata; with the 2025-03-26 fallbacks for servers that publish no
//! resource metadata.

use reqwest::Client;
use url::Url;

use super::error::AuthError;
use super::http::{Fetched, get_json};
use super::metadata::{
    ResourceMetadata, ServerMetadata, canonical_resource, issuer_on_origin, origin_of, resource_covers,
    resource_metadata_candidates, same_issuer, server_metadata_candidates,
};

/// What discovery found for one MCP server.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter to send (RFC 8707).
    pub resource: String,
    /// Scopes the resource metadata lists, for when the challenge names none.
    pub scopes_supported: Option<Vec<String>>,
    /// The authorization server's issuer (or, without metadata, the MCP
    /// server's origin), for messages and the authorization response's
    /// `iss` check.
    pub issuer: String,
    /// Its endpoints and capabilities.
    pub server: ServerMetadata,
    /// Where the resource metadata came from, to notice when a later
    /// challenge points elsewhere.
    pub from: Option<String>,
}

/// Runs discovery for `server`, starting at the challenge's
/// `resource_metadata` when it gave one.
pub async fn discover(
    http: &Client,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Discovered, AuthError> {
    let mut last = None;
    for candidate in resource_metadata_candidates(server, from_challenge) {
        match get_json::<ResourceMetadata>(http, &candidate, "protected resource metadata").await {
            Ok(Fetched::Found(metadata)) => {
                return from_resource_metadata(http, server, metadata, candidate).await;
            }
            Ok(Fetched::Missing(status)) => {
                tracing::debug!(url = %candidate, %status, "no protected resource metadata here");
                last = Some(format!("{candidate} answered HTTP {status}"));
            }
            Err(error) => {
                tracing::debug!(%error, "protected resource metadata");
                last = Some(error.to_string());
            }
        }
    }
    tracing::info!(
        reason = last.as_deref().unwrap_or(""),
        "no protected resource metadata: trying the 2025-03-26 discovery at the server's origin"
    );
    legacy(http, server).await
}

async fn from_resource_metadata(
    http: &Client,
    server: &Url,
    metadata: ResourceMetadata,
    from: String,
) -> Result<Discovered, AuthError> {
    let resource = match metadata.resource {
        Some(advertised) if resource_covers(&advertised, server) => advertised,
        Some(advertised) => {
            return Err(AuthError::ResourceMismatch {
                advertised,
                server: server.to_string(),
            });
        }
        None => canonical_resource(server),
    };
    let Some(issuer) = metadata.authorization_servers.first() else {
        return Err(AuthError::Discovery(format!(
            "{from} names no authorization server"
        )));
    };
    let issuer_url = Url::parse(issuer).map_err(|e| {
        AuthError::Discovery(format!("{from} names the authorization server {issuer:?}: {e}"))
    })?;
    let mut tried = Vec::new();
    for candidate in server_metadata_candidates(&issuer_url) {
        match get_json::<ServerMetadata>(http, &candidate, "authorization server metadata").await? {
            Fetched::Found(found) => {
                check_issuer(&found, issuer, &candidate, |advertised| {
                    same_issuer(issuer, advertised)
                })?;
                return Ok(Discovered {
                    resource,
                    scopes_supported: metadata.scopes_supported,
                    // The metadata's own spelling, which `iss` must match.
                    issuer: found.issuer.clone().unwrap_or_else(|| issuer.clone()),
                    server: found,
                    from: Some(from),
                });
            }
            Fetched::Missing(status) => tried.push(format!("{candidate} (HTTP {status})")),
        }
    }
    Err(AuthError::Discovery(format!(
        "no metadata for the authorization server {issuer}: tried {}",
        tried.join(", ")
    )))
}

/// 2025-03-26: the MCP server's origin is the authorization server; its
/// RFC 8414 metadata, else fixed endpoint paths.
async fn legacy(http: &Client, server: &Url) -> Result<Discovered, AuthError> {
    let origin = origin_of(server);
    let candidate = format!(
        "{}/.well-known/oauth-authorization-server",
        origin.as_str().trim_end_matches('/')
    );
    let origin_text = origin.as_str().trim_end_matches('/').to_owned();
    let (found, issuer) = match get_json::<ServerMetadata>(http, &candidate, "authorization server metadata")
        .await?
    {
        Fetched::Found(found) => {
            check_issuer(&found, &origin_text, &candidate, |advertised| {
                issuer_on_origin(advertised, server)
            })?;
            let issuer = found.issuer.clone().unwrap_or_else(|| origin_text.clone());
            (found, issuer)
        }
        Fetched::Missing(status) => {
            tracing::info!(%status, "no authorization server metadata either: using /authorize, /token and /register");
            (ServerMetadata::fallback(&origin), origin_text)
        }
    };
    Ok(Discovered {
        resource: canonical_resource(server),
        scopes_supported: None,
        issuer,
        server: found,
        from: None,
    })
}

/// Refuses metadata whose `issuer` is missing or not `expected` (as
/// `matches` judges), naming both and where it came from.
fn check_issuer(
    found: &ServerMetadata,
    expected: &str,
    url: &str,
    matches: impl Fn(&str) -> bool,
) -> Result<(), AuthError> {
    match found.issuer.as_deref() {
        Some(advertised) if matches(advertised) => Ok(()),
        advertised => Err(AuthError::IssuerMismatch {
            expected: format!("{expected:?}"),
            advertised: advertised.map_or_else(|| "(none)".to_owned(), |a| format!("{a:?}")),
            url: url.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(issuer: Option<&str>) -> ServerMetadata {
        let mut found = ServerMetadata::fallback(&Url::parse("https://as.example").unwrap());
        found.issuer = issuer.map(str::to_owned);
        found
    }

    #[test]
    fn metadata_for_another_issuer_is_refused_naming_both() {
        let same = |a: &str| same_issuer("https://as.example", a);
        assert!(
            check_issuer(
                &metadata(Some("https://as.example")),
                "https://as.example",
                "u",
                same
            )
            .is_ok()
        );
        let error = check_issuer(
            &metadata(Some("https://evil.example")),
            "https://as.example",
            "u",
            same,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("https://evil.example") && error.contains("https://as.example"),
            "{error}"
        );
        // RFC 8414 makes `issuer` required: a document without one is not
        // taken for anyone's.
        let error = check_issuer(&metadata(None), "https://as.example", "u", same).unwrap_err();
        assert!(error.to_string().contains("(none)"), "{error}");
    }
}
