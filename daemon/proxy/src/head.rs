//! A server's response read only as far as the proxy needs: its envelope.
//!
//! Most lines from a server are results the proxy only passes on. Parsing
//! each into a `serde_json::Value` copies every string of it — for a large
//! result, more work than relaying it — so a response is first read with
//! its parts left as raw JSON text, still checked to be valid JSON, and
//! only one the proxy must act on is parsed in full.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The top level of a response, its parts unparsed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<ResultHead<'a>>,
}

/// What of a result could concern the proxy: the 2026-07-28 `_meta`
/// (server info) and `resultType` (`input_required`).
#[derive(Deserialize)]
struct ResultHead<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(rename = "resultType", borrow)]
    result_type: Option<&'a RawValue>,
}

/// The id of `line` when it is a plain result: a valid JSON-RPC response
/// with a string or number id and a `result` that has neither `_meta` nor
/// a `resultType` — nothing the proxy acts on beyond its id. `None` means
/// the line needs the full parse (or is no such response at all).
pub fn plain_result_id(line: &[u8]) -> Option<Value> {
    // Skipped values are not checked for UTF-8 by serde_json, and JSON
    // must be UTF-8 (the full parse refuses it otherwise): checked first,
    // as a whole (a fuzzing finding).
    let text = std::str::from_utf8(line).ok()?;
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    let result = envelope.result?;
    if envelope.method.is_some() || envelope.error.is_some() || result.meta.is_some() {
        return None;
    }
    if result.result_type.is_some() {
        return None;
    }
    match serde_json::from_str(envelope.id?.get()).ok()? {
        id @ (Value::String(_) | Value::Number(_)) => Some(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn passes_plain_results_only() {
        let plain = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x\n\u00e9"}]}}"#;
        assert_eq!(plain_result_id(plain), Some(json!(7)));
        assert_eq!(
            plain_result_id(br#"{"result":{},"id":"\u0061","jsonrpc":"2.0"}"#),
            Some(json!("a"))
        );
        for line in [
            &br#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{}}}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required"}}"#,
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"2.0","id":7,"method":"x","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{},"id":8}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"text":"unterminated}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":[1]}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"bad":"\xff"}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"skipped\":\"\xf9\"}}",
        ] {
            assert_eq!(plain_result_id(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
