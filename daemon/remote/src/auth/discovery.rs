//! Finding the authorization server of an MCP server: protected resource
//! metadata first (2025-06-18 and later), then the authorization server's
//! metadata; with the 2025-03-26 fallbacks for servers that publish no
//! resource metadata.

use reqwest::Client;
use url::Url;

use super::error::AuthError;
use super::http::{Fetched, get_json};
use super::metadata::{
    ResourceMetadata, ServerMetadata, canonical_resource, origin_of, resource_covers,
    resource_metadata_candidates, server_metadata_candidates,
};

/// What discovery found for one MCP server.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter to send (RFC 8707).
    pub resource: String,
    /// Scopes the resource metadata lists, for when the challenge names none.
    pub scopes_supported: Option<Vec<String>>,
    /// The authorization server's issuer (or, without metadata, the MCP
    /// server's origin), for messages and as the token store's key.
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
                return Ok(Discovered {
                    resource,
                    scopes_supported: metadata.scopes_supported,
                    issuer: issuer.clone(),
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
    let found = match get_json::<ServerMetadata>(http, &candidate, "authorization server metadata").await? {
        Fetched::Found(found) => found,
        Fetched::Missing(status) => {
            tracing::info!(%status, "no authorization server metadata either: using /authorize, /token and /register");
            ServerMetadata::fallback(&origin)
        }
    };
    Ok(Discovered {
        resource: canonical_resource(server),
        scopes_supported: None,
        issuer: origin.as_str().trim_end_matches('/').to_owned(),
        server: found,
        from: None,
    })
}
