//! The 2025 eras' GET stream: where the server sends requests and
//! notifications that answer no POST. Reconnected with `Last-Event-ID`
//! after the server's `retry`; a server without one (405) is left alone.

use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, StatusCode};

use super::era::LAST_EVENT_ID;
use super::error::BridgeError;
use super::post::relay_events;
use super::session::Session;

/// Failed connections in a row before the stream is given up.
const MAX_FAILURES: u32 = 5;

/// Keeps the GET stream open for as long as the session lives.
pub async fn run(session: Arc<Session>) {
    let mut last_event: Option<String> = None;
    let mut retry: Option<Duration> = None;
    let mut failures = 0;
    loop {
        let resume = last_event.clone();
        let response = session
            .execute(|| {
                let request = session.request(Method::GET, None);
                match &resume {
                    Some(id) => request.header(LAST_EVENT_ID, id.as_str()),
                    None => request,
                }
            })
            .await;
        match response {
            Ok(response) if response.status().is_success() => {
                failures = 0;
                let end = relay_events(&session, response, None).await;
                last_event = end.last_event.or(last_event);
                retry = end.retry.or(retry);
                if let Some(error @ BridgeError::TooLarge { .. }) = end.error {
                    session.warn("the event stream was closed", &error);
                }
            }
            // No stream offered, or the session is gone: nothing to keep.
            Ok(response)
                if matches!(
                    response.status(),
                    StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST
                ) =>
            {
                return;
            }
            Ok(response) => {
                failures += 1;
                let error = BridgeError::Status {
                    status: response.status().as_u16(),
                    detail: String::new(),
                };
                if failures >= MAX_FAILURES {
                    session.warn("the event stream was given up", &error);
                    return;
                }
            }
            Err(error) => {
                failures += 1;
                if failures >= MAX_FAILURES {
                    session.warn("the event stream was given up", &error);
                    return;
                }
            }
        }
        // The server's own pace, as the spec asks; without one, a second,
        // doubled with each failure.
        let pause = retry.unwrap_or(session.options().default_retry * 2u32.pow(failures));
        tokio::time::sleep(pause).await;
    }
}
