//! The proxy's line handling: bytes in arbitrary chunks through the real
//! `LineReader`, then each line through `message::classify` and, for
//! requests, the capability rewriting.
//!
//! Invariants: never panics; the frames do not depend on where the chunks
//! break, nor on a read that is abandoned while it waits (the relay's
//! `select!` drops `next()` whenever the other peer speaks first); a line over the cap is reported as `TooLong` with its true size
//! and the lines after it still arrive; every JSON-RPC message survives a
//! round trip through `to_line`; the rewriting is idempotent; a line the
//! envelope check passes on unparsed is a response, with that id, that the
//! full parse would have passed on too.

#![no_main]

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};

use elicit_proxy::{buffers, caps, framing, head, message};
use framing::{Frame, LineReader};
use message::{Kind, Line};

/// An in-memory peer that hands its bytes over in the given chunks, as a
/// pipe would; before a chunk marked to stall it is not ready once.
struct Chunks {
    chunks: Vec<(Vec<u8>, bool)>,
    at: usize,
    pos: usize,
}

impl Chunks {
    fn new(chunks: Vec<(Vec<u8>, bool)>) -> Self {
        // An empty read means end of input, so empty chunks are dropped.
        let chunks = chunks.into_iter().filter(|(c, _)| !c.is_empty()).collect();
        Chunks {
            chunks,
            at: 0,
            pos: 0,
        }
    }
}

impl AsyncRead for Chunks {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some((chunk, _)) = this.chunks.get(this.at) {
            let n = (chunk.len() - this.pos).min(buf.remaining());
            buf.put_slice(&chunk[this.pos..this.pos + n]);
            this.pos += n;
            if this.pos == chunk.len() {
                this.at += 1;
                this.pos = 0;
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for Chunks {
    fn poll_fill_buf(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        if let Some((_, stall)) = this.chunks.get_mut(this.at)
            && *stall
        {
            *stall = false;
            return Poll::Pending;
        }
        Poll::Ready(Ok(this
            .chunks
            .get(this.at)
            .map_or(&[][..], |(c, _)| &c[this.pos..])))
    }

    fn consume(mut self: Pin<&mut Self>, amount: usize) {
        self.pos += amount;
        if self.chunks.get(self.at).is_some_and(|(c, _)| self.pos == c.len()) {
            self.at += 1;
            self.pos = 0;
        }
    }
}

/// Every frame of `chunks`. A read that is not ready is abandoned, as the
/// relay's `select!` abandons it, and a new one started.
fn frames(chunks: Vec<(Vec<u8>, bool)>, cap: usize) -> Vec<Frame> {
    let mut reader = LineReader::new(Chunks::new(chunks), cap).recycling(buffers::Buffers::default());
    let mut out = Vec::new();
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        let next = pin!(reader.next()).poll(&mut cx);
        match next {
            Poll::Ready(Ok(Some(frame))) => out.push(frame),
            Poll::Ready(Ok(None)) => return out,
            Poll::Ready(Err(e)) => panic!("an in-memory read failed: {e}"),
            Poll::Pending => {}
        }
    }
}

/// The framing by its definition: split at `\n`, a last line without one
/// still counts, a line longer than `cap` becomes its size.
fn expected(data: &[u8], cap: usize) -> Vec<Frame> {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| {
            if l.len() > cap {
                Frame::TooLong { bytes: l.len() }
            } else {
                Frame::Line(l.to_vec())
            }
        })
        .collect()
}

fn check_line(line: &[u8]) {
    if let Some(id) = head::plain_result_id(line) {
        let Line::Message { value, kind } = message::classify(line) else {
            panic!("the envelope check passed a line that is no message");
        };
        assert_eq!(kind, Kind::Response);
        assert_eq!(message::id(&value), Some(&id));
        let result = value.get("result").and_then(Value::as_object).expect("a result object");
        assert!(!result.contains_key("_meta") && !result.contains_key("resultType"));
        assert!(value.get("error").is_none() && value.get("method").is_none());
    }
    match message::classify(line) {
        Line::Blank => assert!(line.iter().all(u8::is_ascii_whitespace)),
        Line::NotJson { error, id } => {
            assert!(!error.is_empty());
            assert!(serde_json::from_slice::<Value>(line).is_err());
            assert!(id.is_none_or(|id| id.is_string() || id.is_number()));
        }
        Line::NotJsonRpc { id } => {
            let value: Value = serde_json::from_slice(line).expect("classified as JSON");
            assert_eq!(message::kind(&value), Kind::Invalid);
            assert!(id.is_none_or(|id| id.is_string() || id.is_number()));
        }
        Line::Message { value, kind } => {
            assert_ne!(kind, Kind::Invalid);
            // What the proxy writes for a message reads back as the same
            // message of the same kind with the same id.
            let written = message::to_line(&value);
            assert!(!written.contains(&b'\n'), "a written line holds a newline");
            let back: Value = serde_json::from_slice(&written).expect("own line parses");
            assert_eq!(back, value);
            assert_eq!(message::kind(&back), kind);
            assert_eq!(message::id(&back), message::id(&value));
            if kind == Kind::Request {
                rewrite_twice(value);
            }
        }
    }
}

/// The capability rewriting declares form and URL elicitation and, done
/// again, changes nothing.
fn rewrite_twice(mut value: Value) {
    let mut modern = value.clone();
    let (_, _) = caps::rewrite_initialize(&mut value);
    if value.get("params").is_some_and(Value::is_object) {
        let elicitation = &value["params"]["capabilities"]["elicitation"];
        assert!(elicitation.get("form").is_some() && elicitation.get("url").is_some());
    }
    let (_, again) = caps::rewrite_initialize(&mut value);
    assert!(!again, "rewrite_initialize is not idempotent");
    if caps::rewrite_modern(&mut modern).is_some() {
        let meta = caps::modern_meta(&modern).expect("still modern");
        let elicitation = &meta[caps::META_CLIENT_CAPABILITIES]["elicitation"];
        assert!(elicitation.get("form").is_some() && elicitation.get("url").is_some());
        let again = caps::rewrite_modern(&mut modern).map(|(_, changed)| changed);
        assert_eq!(again, Some(false), "rewrite_modern is not idempotent");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(cap) = u.int_in_range(1..=256usize) else {
        return;
    };
    let Ok(cuts) = u.arbitrary::<Vec<u8>>() else {
        return;
    };
    let input = u.take_rest();
    // The same bytes in the fuzzer's chunks, in one piece and byte by byte.
    let mut chunks = Vec::new();
    let mut rest = input;
    for cut in cuts {
        // The low bits: the chunk's length; the high bit: a stall first.
        let n = usize::from(cut & 0x7f).min(rest.len());
        let (head, tail) = rest.split_at(n);
        chunks.push((head.to_vec(), cut & 0x80 != 0));
        rest = tail;
    }
    chunks.push((rest.to_vec(), false));
    let got = frames(chunks, cap);
    assert_eq!(got, expected(input, cap), "framing differs from its definition");
    assert_eq!(
        got,
        frames(vec![(input.to_vec(), false)], cap),
        "one chunk differs"
    );
    if input.len() <= 512 {
        // Byte by byte, each byte stalling first: every read abandoned once.
        let bytes = input.iter().map(|&b| (vec![b], true)).collect();
        assert_eq!(got, frames(bytes, cap), "byte-by-byte differs");
    }
    for frame in &got {
        match frame {
            Frame::Line(line) => {
                assert!(line.len() <= cap && !line.contains(&b'\n'));
                check_line(line);
            }
            Frame::TooLong { bytes } => assert!(*bytes > cap),
        }
    }
    // Lines are also classified whole, whatever the cap, so that long
    // messages are exercised too.
    for line in input.split(|&b| b == b'\n') {
        check_line(line);
    }
});
