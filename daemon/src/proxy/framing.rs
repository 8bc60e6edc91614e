//! Newline-delimited framing with a size cap.
//!
//! MCP's stdio transport is one JSON-RPC message per line. A peer that never
//! sends a newline (or sends a gigabyte) must not make the proxy buffer
//! without bound, so a line longer than the cap is skipped up to its newline
//! and reported as [`Frame::TooLong`].

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One unit read from a peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its `\n` (a trailing `\r` is kept: the
    /// line travels on exactly as it came).
    Line(Vec<u8>),
    /// A line longer than the cap; its bytes were discarded.
    TooLong {
        /// How many bytes the line had before its newline (or EOF).
        bytes: usize,
    },
}

/// Reads [`Frame`]s from a buffered reader.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    cap: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Frames `inner`, refusing lines longer than `cap` bytes.
    pub fn new(inner: R, cap: usize) -> Self {
        LineReader { inner, cap }
    }

    /// The next frame, or `None` at end of input. A last line without a
    /// newline still counts as a line.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        let mut line = Vec::new();
        let mut seen = 0usize;
        let mut overflow = false;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                // End of input: whatever is pending is the last line.
                return Ok(match (seen, overflow) {
                    (0, _) => None,
                    (bytes, true) => Some(Frame::TooLong { bytes }),
                    (_, false) => Some(Frame::Line(line)),
                });
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (&buf[..at], Some(at + 1)),
                None => (buf, None),
            };
            seen += chunk.len();
            if !overflow && seen > self.cap {
                // Drop what was gathered; keep counting to the newline.
                overflow = true;
                line = Vec::new();
            }
            if !overflow {
                line.extend_from_slice(chunk);
            }
            let used = done.unwrap_or(chunk.len());
            self.inner.consume(used);
            if done.is_some() {
                return Ok(Some(if overflow {
                    Frame::TooLong { bytes: seen }
                } else {
                    Frame::Line(line)
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], cap: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(4, input), cap);
        let mut out = Vec::new();
        while let Some(frame) = reader.next().await.expect("read") {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_keeps_bytes() {
        let got = frames(b"{\"a\":1}\r\n\n{\"b\":2}", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}\r".to_vec()),
                Frame::Line(Vec::new()),
                Frame::Line(b"{\"b\":2}".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn skips_long_lines_and_goes_on() {
        let got = frames(b"0123456789abc\nok\n0123456789", 8).await;
        assert_eq!(
            got,
            vec![
                Frame::TooLong { bytes: 13 },
                Frame::Line(b"ok".to_vec()),
                Frame::TooLong { bytes: 10 }
            ]
        );
    }
}
