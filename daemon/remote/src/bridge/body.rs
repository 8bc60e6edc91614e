//! Reading what the server sends, with a cap: a JSON body whole, an event
//! stream event by event. A server that sends a 1 GB body or one endless
//! event gets an error, not the proxy's memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::{Stream, StreamExt};
use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;
use sse_stream::{Sse, SseByteStream};

use super::error::BridgeError;

/// What a response carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    Events,
    /// No body (202, or an empty 200).
    Empty,
}

/// What `response` carries, by its `Content-Type`.
pub fn kind(response: &Response) -> Result<Kind, BridgeError> {
    let Some(value) = response.headers().get(CONTENT_TYPE) else {
        return Ok(Kind::Empty);
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => Ok(Kind::Json),
        "text/event-stream" => Ok(Kind::Events),
        _ if response.content_length() == Some(0) => Ok(Kind::Empty),
        other => Err(BridgeError::ContentType(other.to_owned())),
    }
}

/// The whole body, refused once it passes `cap` bytes.
pub async fn whole(mut response: Response, cap: usize) -> Result<Vec<u8>, BridgeError> {
    if response
        .content_length()
        .is_some_and(|length| length > cap as u64)
    {
        return Err(BridgeError::TooLarge { limit: cap });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| BridgeError::Events(error.without_url().to_string()))?
    {
        if body.len() + chunk.len() > cap {
            return Err(BridgeError::TooLarge { limit: cap });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The JSON-RPC messages of a JSON body or of one event's data, each as
/// one line: a batch is split, and a message written over several lines is
/// written again on one (lines are the relay's frames).
pub fn messages(body: &[u8]) -> Result<Vec<Vec<u8>>, BridgeError> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace());
    if start.is_some_and(|i| body[i] == b'[') {
        let batch: Vec<Value> =
            serde_json::from_slice(body).map_err(|error| BridgeError::NotJson(error.to_string()))?;
        return Ok(batch.iter().filter_map(|m| serde_json::to_vec(m).ok()).collect());
    }
    if memchr::memchr(b'\n', body).is_none() {
        return Ok(vec![body.to_vec()]);
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|error| BridgeError::NotJson(error.to_string()))?;
    Ok(vec![
        serde_json::to_vec(&value).map_err(|error| BridgeError::NotJson(error.to_string()))?,
    ])
}

/// The events of an event-stream body. Bytes are counted from the end of
/// the last event: one event over `cap` ends the stream with
/// [`BridgeError::TooLarge`].
pub fn events(response: Response, cap: usize) -> impl Stream<Item = Result<Sse, BridgeError>> + Send + Unpin {
    let since_event = Arc::new(AtomicUsize::new(0));
    let counted = since_event.clone();
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(|error| std::io::Error::other(error.without_url()))?;
        if counted.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > cap {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "event over the cap",
            ));
        }
        Ok(chunk)
    });
    Box::pin(SseByteStream::new(bytes).map(move |event| {
        since_event.store(0, Ordering::Relaxed);
        event.map_err(|error| match error {
            sse_stream::Error::Body(inner)
                if inner
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::FileTooLarge) =>
            {
                BridgeError::TooLarge { limit: cap }
            }
            other => BridgeError::Events(other.to_string()),
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::messages;

    #[test]
    fn messages_are_one_per_line() {
        assert_eq!(messages(b"{\"a\":1}").unwrap(), vec![b"{\"a\":1}".to_vec()]);
        assert_eq!(messages(b"{\n \"a\": 1\n}").unwrap(), vec![b"{\"a\":1}".to_vec()]);
        assert_eq!(messages(b" [{\"a\":1},{\"b\":2}]").unwrap().len(), 2);
        assert!(messages(b"{\n oops").is_err());
    }
}
