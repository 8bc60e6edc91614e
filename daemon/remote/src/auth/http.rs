//! HTTP for the authorization flow: bounded bodies, JSON metadata, and
//! the adapter through which the `oauth2` crate sends its requests on the
//! bridge's own `reqwest::Client`.

use reqwest::{Client, Response, StatusCode};
use serde::de::DeserializeOwned;

use super::error::AuthError;

/// The most any metadata, registration or token response may carry: all
/// are small JSON objects, and a server sending more is broken or hostile.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// How long one request of the flow may take, body included.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Reads `response`'s body, failing past [`BODY_LIMIT`].
pub async fn bounded_body(url: &str, mut response: Response) -> Result<Vec<u8>, AuthError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| AuthError::http(url, e))? {
        if body.len() + chunk.len() > BODY_LIMIT {
            return Err(AuthError::TooLarge {
                url: url.to_owned(),
                limit: BODY_LIMIT,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The outcome of fetching one metadata document.
pub enum Fetched<T> {
    /// It is there.
    Found(T),
    /// The server answered an error status (try the next candidate).
    Missing(StatusCode),
}

/// GETs `url` and parses its JSON body as `T`; a non-success status is
/// [`Fetched::Missing`], a transport failure an error.
pub async fn get_json<T: DeserializeOwned>(
    http: &Client,
    url: &str,
    what: &'static str,
) -> Result<Fetched<T>, AuthError> {
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|e| AuthError::http(url, e))?;
    let status = response.status();
    if !status.is_success() {
        return Ok(Fetched::Missing(status));
    }
    let body = bounded_body(url, response).await?;
    parse_json(url, what, &body).map(Fetched::Found)
}

/// Parses `body` as `T`; the error names the field, never the body.
pub fn parse_json<T: DeserializeOwned>(url: &str, what: &'static str, body: &[u8]) -> Result<T, AuthError> {
    serde_json::from_slice(body).map_err(|error| AuthError::Malformed {
        url: url.to_owned(),
        what,
        // serde_json's message names the line and column and the type
        // expected, not the text it found.
        reason: error.to_string(),
    })
}

/// The `oauth2` crate's HTTP client: [`oauth2_send`] on the bridge's
/// client. A type of its own rather than a closure, whose future the
/// compiler cannot prove `Send` for every lifetime (and the bridge spawns
/// the requests that authorize).
pub struct OAuthHttp<'a>(pub &'a Client);

impl<'c> oauth2::AsyncHttpClient<'c> for OAuthHttp<'_> {
    type Error = AuthError;
    type Future =
        std::pin::Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, AuthError>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(oauth2_send(self.0, request))
    }
}

/// Sends one request built by the `oauth2` crate through `http`, with the
/// body capped, so that the flow shares the bridge's TLS and proxy
/// settings. Redirects are whatever `http` does; token endpoints do not
/// redirect.
pub async fn oauth2_send(
    http: &Client,
    request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, AuthError> {
    let url = request.uri().to_string();
    let mut request = reqwest::Request::try_from(request).map_err(|e| AuthError::http(&url, e))?;
    *request.timeout_mut() = Some(REQUEST_TIMEOUT);
    let mut response = http
        .execute(request)
        .await
        .map_err(|e| AuthError::http(&url, e))?;
    let status = response.status();
    let headers = std::mem::take(response.headers_mut());
    let body = bounded_body(&url, response).await?;
    let mut built = oauth2::HttpResponse::new(body);
    *built.status_mut() = status;
    *built.headers_mut() = headers;
    Ok(built)
}
