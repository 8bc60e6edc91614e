//! A form's request held once, as the JSON text it came as: the store
//! writes it into the form's record verbatim, and every `Show` and claim
//! shares the same allocation. A parsed `serde_json::Value` of even a
//! confirmation costs about a kilobyte; 10 000 queued forms held two of
//! them each.

use std::sync::Arc;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The `elicitation/create` params as JSON text, known to be one JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestText(Arc<str>);

impl RequestText {
    /// `text` once it is known to be one JSON value, without the white
    /// space around it.
    pub fn new(text: &str) -> Result<RequestText, serde_json::Error> {
        let raw: &RawValue = serde_json::from_str(text)?;
        Ok(RequestText(Arc::from(raw.get())))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, shared rather than copied.
    pub fn shared(&self) -> Arc<str> {
        self.0.clone()
    }
}

impl Serialize for RequestText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Checked at construction; the scan again costs far less than the
        // tree it replaces.
        let raw: &RawValue = serde_json::from_str(&self.0).map_err(S::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RequestText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        if raw.get().is_empty() {
            return Err(D::Error::custom("an empty request"));
        }
        Ok(RequestText(Arc::from(raw.get())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Record {
        request: RequestText,
    }

    #[test]
    fn the_text_goes_into_a_record_verbatim_and_comes_back() {
        let text = RequestText::new(" {\"message\": \"Go?\",\"b\":[1, 2]}\n").expect("JSON");
        assert_eq!(text.as_str(), "{\"message\": \"Go?\",\"b\":[1, 2]}");
        let bytes = serde_json::to_vec(&Record {
            request: text.clone(),
        })
        .expect("encode");
        assert_eq!(bytes, b"{\"request\":{\"message\": \"Go?\",\"b\":[1, 2]}}");
        let back: Record = serde_json::from_slice(&bytes).expect("decode");
        assert_eq!(back.request, text);
    }

    #[test]
    fn a_record_stored_as_a_tree_reads_as_its_text() {
        // What records written before this type look like.
        let back: Record = serde_json::from_slice(br#"{"request":{"message":"Go?"}}"#).expect("decode");
        assert_eq!(back.request.as_str(), r#"{"message":"Go?"}"#);
    }

    #[test]
    fn text_that_is_not_one_json_value_is_refused() {
        assert!(RequestText::new("{").is_err());
        assert!(RequestText::new("{} {}").is_err());
    }
}
