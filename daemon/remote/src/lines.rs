//! Lines handed to a relay through a channel: both transports here feed a
//! relay's input from tasks (the bridge its server's answers, `serve` its
//! host's requests), and the relay reads bytes.

use bytes::Bytes;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;
use tokio_util::io::StreamReader;

/// A reader of everything sent on `received`, in order; it ends when every
/// sender is gone.
pub fn reader(mut received: mpsc::Receiver<Bytes>) -> impl AsyncRead + Send + Unpin {
    let chunks = futures_util::stream::poll_fn(move |cx| {
        received
            .poll_recv(cx)
            .map(|line| line.map(Ok::<_, std::io::Error>))
    });
    StreamReader::new(Box::pin(chunks))
}
