//! One byte budget for every request body the server holds at once: a
//! per-request limit alone let 12 concurrent 63 MiB bodies take serve to
//! 1.4 GiB. A body's bytes are taken from a semaphore of bytes before
//! they are read (all at once when `Content-Length` says how many, else
//! chunk by chunk), and given back when the relay has read the message
//! they became (the permit travels with the line, see [`Held::line`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::rpc::{Rejection, SERVER_ERROR};

/// How long reading one body may take: a client that declares a large
/// body and sends it slowly holds the budget no longer than this.
const READ_TIME: Duration = Duration::from_secs(60);

/// Request bodies held at once, across every request and endpoint.
#[derive(Debug, Clone)]
pub struct Budget {
    bytes: Arc<Semaphore>,
    total: usize,
    max_body: usize,
    patience: Duration,
}

/// Bytes of the budget held by one body, and then by its message.
#[derive(Debug)]
pub struct Held(Option<OwnedSemaphorePermit>);

impl Budget {
    /// `total` bytes shared by every body, each at most `max_body`; a
    /// body waits at most `patience` for its share.
    pub fn new(total: usize, max_body: usize, patience: Duration) -> Budget {
        // The semaphore counts in u32 chunks and has its own ceiling.
        let total = total.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Budget {
            bytes: Arc::new(Semaphore::new(total)),
            total,
            max_body: max_body.min(total),
            patience,
        }
    }

    /// Bytes free now (for tests and logs).
    pub fn available(&self) -> usize {
        self.bytes.available_permits()
    }

    /// Reads `body` whole within the budget: 413 past the per-body
    /// limit, 503 when the server already holds its budget's worth and
    /// none frees in time.
    pub async fn read(&self, body: Body, content_length: Option<u64>) -> Result<(Bytes, Held), Rejection> {
        let deadline = tokio::time::Instant::now() + self.patience;
        let mut held = Held(None);
        if let Some(length) = content_length {
            let length = usize::try_from(length).unwrap_or(usize::MAX);
            if length > self.max_body {
                return Err(self.too_large(length));
            }
            self.take(&mut held, length, deadline).await?;
        }
        let reserved = held.bytes();
        let mut data = Vec::with_capacity(reserved);
        let mut chunks = body.into_data_stream();
        let read_by = tokio::time::Instant::now() + READ_TIME;
        loop {
            let chunk = match tokio::time::timeout_at(read_by, chunks.next()).await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(_) => {
                    return Err(Rejection::new(
                        StatusCode::REQUEST_TIMEOUT,
                        SERVER_ERROR,
                        format!(
                            "the request body took longer than {} s to arrive",
                            READ_TIME.as_secs()
                        ),
                    ));
                }
            };
            let chunk =
                chunk.map_err(|error| Rejection::bad_request(format!("cannot read the body: {error}")))?;
            let size = data.len() + chunk.len();
            if size > self.max_body {
                return Err(self.too_large(size));
            }
            let more = size.saturating_sub(held.bytes());
            self.take(&mut held, more, deadline).await?;
            data.extend_from_slice(&chunk);
        }
        Ok((Bytes::from(data), held))
    }

    /// Adds `more` bytes to `held`, waiting until `deadline` at most.
    async fn take(
        &self,
        held: &mut Held,
        more: usize,
        deadline: tokio::time::Instant,
    ) -> Result<(), Rejection> {
        if more == 0 {
            return Ok(());
        }
        let count = u32::try_from(more).map_err(|_| self.too_large(more))?;
        let permit = tokio::time::timeout_at(deadline, self.bytes.clone().acquire_many_owned(count))
            .await
            .map_err(|_| self.full())?
            .map_err(|_| self.full())?;
        match &mut held.0 {
            Some(existing) => existing.merge(permit),
            slot @ None => *slot = Some(permit),
        }
        Ok(())
    }

    fn too_large(&self, bytes: usize) -> Rejection {
        Rejection::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            SERVER_ERROR,
            format!(
                "the request body is {} bytes or more, over this server's limit of {} bytes",
                bytes, self.max_body
            ),
        )
    }

    fn full(&self) -> Rejection {
        tracing::warn!(
            total = self.total,
            "request bodies fill the server's budget: refused one"
        );
        Rejection::new(
            StatusCode::SERVICE_UNAVAILABLE,
            SERVER_ERROR,
            format!(
                "this server already holds {} MiB of request bodies, the most it takes at once: retry shortly",
                self.total / (1024 * 1024)
            ),
        )
        .header(header::RETRY_AFTER, HeaderValue::from_static("1"))
    }
}

impl Held {
    /// Nothing held (for messages made here, not read from a client).
    pub fn none() -> Held {
        Held(None)
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.0.as_ref().map_or(0, OwnedSemaphorePermit::num_permits)
    }

    /// `line` and its newline as one chunk for a relay that keeps the
    /// budget held until the relay has read it.
    pub fn line(self, mut line: Vec<u8>) -> Bytes {
        line.push(b'\n');
        Bytes::from_owner(Owned { line, _held: self })
    }
}

/// A line that holds its share of the budget while it exists.
struct Owned {
    line: Vec<u8>,
    _held: Held,
}

impl AsRef<[u8]> for Owned {
    fn as_ref(&self) -> &[u8] {
        &self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(chunks: &[&'static [u8]]) -> Body {
        let stream = futures_util::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c)))
                .collect::<Vec<_>>(),
        );
        Body::from_stream(stream)
    }

    fn status(result: Result<(Bytes, Held), Rejection>) -> u16 {
        match result {
            Ok(_) => 200,
            Err(rejection) => axum::response::IntoResponse::into_response(rejection)
                .status()
                .as_u16(),
        }
    }

    #[tokio::test]
    async fn bodies_share_one_budget_until_their_lines_are_read() {
        let budget = Budget::new(10, 8, Duration::from_millis(20));
        let (data, held) = budget.read(body(&[b"abc", b"def"]), None).await.unwrap();
        assert_eq!(&data[..], b"abcdef");
        assert_eq!(budget.available(), 4);
        assert_eq!(status(budget.read(body(&[b"12345"]), Some(5)).await), 503);
        let line = held.line(data.to_vec());
        assert_eq!(&line[..], b"abcdef\n");
        assert_eq!(budget.available(), 4, "held while the line waits");
        drop(line);
        assert_eq!(budget.available(), 10);
        assert_eq!(status(budget.read(body(&[b"12345"]), Some(5)).await), 200);
        assert_eq!(budget.available(), 10, "a body dropped gives its bytes back");
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_declared_or_not() {
        let budget = Budget::new(100, 8, Duration::from_millis(20));
        assert_eq!(status(budget.read(body(&[b"123456789"]), Some(9)).await), 413);
        assert_eq!(status(budget.read(body(&[b"12345", b"6789"]), None).await), 413);
        assert_eq!(budget.available(), 100);
    }

    #[tokio::test]
    async fn a_waiting_body_gets_the_bytes_another_gives_back() {
        let budget = Budget::new(10, 10, Duration::from_secs(5));
        let (_, held) = budget.read(body(&[b"1234567890"]), Some(10)).await.unwrap();
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { status(budget.read(body(&[b"abc"]), Some(3)).await) }
        });
        tokio::task::yield_now().await;
        drop(held);
        assert_eq!(waiting.await.unwrap(), 200);
    }
}
