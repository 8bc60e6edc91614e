//! Who this client is to the authorization server: a pre-registered id
//! (and secret), a Client ID Metadata Document URL, or a dynamic
//! registration (RFC 7591); and how it authenticates at the token
//! endpoint.

use reqwest::Client;
use serde::Deserialize;
use url::Url;

use super::discovery::Discovered;
use super::error::AuthError;
use super::http::{bounded_body, parse_json};
use super::secret::Secret;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Method {
    /// `client_secret_basic`: HTTP Basic with the id and secret.
    #[serde(rename = "client_secret_basic")]
    Basic,
    /// `client_secret_post`: the id and secret in the form body.
    #[serde(rename = "client_secret_post")]
    Post,
    /// `none`: a public client, the id alone in the body.
    #[serde(rename = "none")]
    None,
}

impl Method {
    fn parse(name: &str) -> Option<Method> {
        match name {
            "client_secret_basic" => Some(Method::Basic),
            "client_secret_post" => Some(Method::Post),
            "none" => Some(Method::None),
            _ => None,
        }
    }
}

/// How the user configured this client's identity.
#[derive(Debug, Clone, Default)]
pub struct ClientIdentity {
    /// A pre-registered `client_id`.
    pub client_id: Option<String>,
    /// Its secret, if it is a confidential client.
    pub client_secret: Option<Secret>,
    /// An https URL serving this client's metadata document, used as its
    /// `client_id` where the server accepts that (2025-11-25).
    pub metadata_document: Option<Url>,
    /// The `client_name` sent in a dynamic registration.
    pub client_name: String,
}

/// A client the authorization server knows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Registered {
    /// The `client_id`.
    pub id: String,
    /// The secret, for `client_secret_basic` or `client_secret_post`.
    pub secret: Option<Secret>,
    /// How it authenticates at the token endpoint.
    pub method: Method,
}

/// The method for a client holding a secret, from the methods the server
/// lists (absent: `client_secret_basic`, RFC 8414 §2).
pub fn confidential_method(supported: Option<&[String]>) -> Method {
    let Some(supported) = supported else {
        return Method::Basic;
    };
    let offers = |name: &str| supported.iter().any(|m| m == name);
    if offers("client_secret_basic") {
        Method::Basic
    } else if offers("client_secret_post") {
        Method::Post
    } else if offers("none") {
        Method::None
    } else {
        Method::Basic
    }
}

/// The method asked for in a dynamic registration: a public client where
/// the server allows one (nothing to keep secret), else a confidential one.
pub fn requested_method(supported: Option<&[String]>) -> Method {
    match supported {
        Some(supported) if supported.iter().any(|m| m == "none") => Method::None,
        other => confidential_method(other),
    }
}

/// Identifies this client to the server `found`, registering it if it must.
pub async fn identify(
    http: &Client,
    found: &Discovered,
    identity: &ClientIdentity,
    redirect_uri: &str,
) -> Result<Registered, AuthError> {
    let supported = found.server.token_endpoint_auth_methods_supported.as_deref();
    if let Some(id) = &identity.client_id {
        let (secret, method) = match &identity.client_secret {
            Some(secret) => match confidential_method(supported) {
                Method::None => (None, Method::None),
                method => (Some(secret.clone()), method),
            },
            None => (None, Method::None),
        };
        return Ok(Registered {
            id: id.clone(),
            secret,
            method,
        });
    }
    if let Some(document) = &identity.metadata_document
        && found.server.client_id_metadata_document_supported
    {
        return Ok(Registered {
            id: document.to_string(),
            secret: None,
            method: Method::None,
        });
    }
    let Some(endpoint) = &found.server.registration_endpoint else {
        return Err(AuthError::Registration {
            issuer: found.issuer.clone(),
            reason: "it offers no dynamic registration and no client id is configured".into(),
        });
    };
    register(http, endpoint, identity, redirect_uri, supported).await
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    client_secret: Option<Secret>,
    token_endpoint_auth_method: Option<String>,
}

#[derive(Deserialize)]
struct OAuthErrorBody {
    error: String,
    error_description: Option<String>,
}

/// RFC 7591 §3: POSTs this client's metadata to `endpoint`.
async fn register(
    http: &Client,
    endpoint: &str,
    identity: &ClientIdentity,
    redirect_uri: &str,
    supported: Option<&[String]>,
) -> Result<Registered, AuthError> {
    let requested = requested_method(supported);
    let body = serde_json::json!({
        "client_name": identity.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": requested,
    });
    let response = http
        .post(endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| AuthError::http(endpoint, e))?;
    let status = response.status();
    let bytes = bounded_body(endpoint, response).await?;
    if !status.is_success() {
        return Err(match serde_json::from_slice::<OAuthErrorBody>(&bytes) {
            Ok(error) => oauth_error(endpoint, error.error, error.error_description),
            Err(_) => AuthError::Status {
                url: endpoint.to_owned(),
                status,
                detail: " to the client registration".into(),
            },
        });
    }
    let registered: RegistrationResponse = parse_json(endpoint, "a client registration", &bytes)?;
    let method = match registered.token_endpoint_auth_method.as_deref() {
        Some(name) => Method::parse(name).ok_or_else(|| AuthError::Registration {
            issuer: endpoint.to_owned(),
            reason: format!(
                "it registered the client for the token endpoint method {name:?}, which elicit lacks"
            ),
        })?,
        None if registered.client_secret.is_some() => confidential_method(supported),
        None => Method::None,
    };
    let secret = if method == Method::None {
        None
    } else {
        registered.client_secret
    };
    if method != Method::None && secret.is_none() {
        return Err(AuthError::Registration {
            issuer: endpoint.to_owned(),
            reason: "it registered a confidential client without a secret".into(),
        });
    }
    Ok(Registered {
        id: registered.client_id,
        secret,
        method,
    })
}

/// An [`AuthError::OAuth`] from an error body's fields.
pub fn oauth_error(endpoint: &str, error: String, description: Option<String>) -> AuthError {
    AuthError::OAuth {
        endpoint: endpoint.to_owned(),
        error,
        description: description.map(|d| format!(": {d}")).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Method, confidential_method, requested_method};

    fn list(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn methods_follow_what_the_server_offers() {
        assert_eq!(confidential_method(None), Method::Basic);
        assert_eq!(
            confidential_method(Some(&list("client_secret_post"))),
            Method::Post
        );
        assert_eq!(
            confidential_method(Some(&list("none client_secret_basic"))),
            Method::Basic
        );
        assert_eq!(confidential_method(Some(&list("none"))), Method::None);
        assert_eq!(
            requested_method(Some(&list("client_secret_basic none"))),
            Method::None
        );
        assert_eq!(requested_method(Some(&list("client_secret_post"))), Method::Post);
        assert_eq!(requested_method(None), Method::Basic);
    }
}
