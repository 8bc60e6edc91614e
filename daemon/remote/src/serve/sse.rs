//! The text of an SSE response body, written here rather than with axum's
//! `Sse`: the priming event the spec asks for (SEP-1699) is an id with an
//! *empty* `data:` field, and axum's `Event::data("")` writes no data line
//! at all. Without one, SSE parsers (the spec's and eventsource-parser,
//! which the TypeScript SDK and the conformance suite use) dispatch no
//! event, so the client never learns the priming id, nor can it resume.

use std::time::Duration;

use bytes::Bytes;

/// How often an idle stream sends a comment, so that proxies and clients
/// see it alive (axum's `KeepAlive` default).
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive: a comment line and the blank line that ends it.
pub const COMMENT: &[u8] = b":\n\n";

/// The priming event: `id`, the reconnection delay, and an empty `data:`
/// field, so that it is dispatched and carries no message.
pub fn priming(id: &str, retry: Duration) -> Bytes {
    Bytes::from(format!(
        "id: {}\nretry: {}\ndata: \n\n",
        clean(id),
        retry.as_millis()
    ))
}

/// One message: its id, if the stream can be resumed, and the JSON-RPC
/// line, a `data:` field per line should it hold line breaks.
pub fn message(id: Option<&str>, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(&clean(id));
        out.push('\n');
    }
    // CRLF, CR and LF all end an SSE line; each piece is its own field.
    for line in data.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// An id without line breaks (which would end the field early) or NUL
/// (which makes parsers ignore the id); ours are `STREAM-SEQ`, so this
/// only guards against a future caller.
fn clean(id: &str) -> String {
    id.chars().filter(|c| !matches!(c, '\r' | '\n' | '\0')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_priming_event_has_an_empty_data_field() {
        assert_eq!(
            &priming("3-0", Duration::from_millis(1500))[..],
            b"id: 3-0\nretry: 1500\ndata: \n\n"
        );
    }

    #[test]
    fn a_message_is_one_data_field_per_line() {
        assert_eq!(&message(Some("1-2"), "{}")[..], b"id: 1-2\ndata: {}\n\n");
        assert_eq!(&message(None, "a\r\nb\nc")[..], b"data: a\ndata: b\ndata: c\n\n");
        assert_eq!(&message(Some("x\n"), "")[..], b"id: x\ndata: \n\n");
    }
}
