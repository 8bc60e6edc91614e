//! The `WWW-Authenticate` header of a 401 or 403 (RFC 9110 §11.6.1, RFC
//! 6750 §3, RFC 9728 §5.1): the `Bearer` challenge's parameters. The
//! grammar is left to the `http-auth` crate's parser.

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

/// What a `Bearer` challenge asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`: where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`, split on spaces.
    pub scope: Option<Vec<String>>,
    /// `error` (`invalid_token`, `insufficient_scope`, …).
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge among `headers`' `WWW-Authenticate` values;
    /// `None` when there is none (or none that parses).
    pub fn from_headers(headers: &HeaderMap) -> Option<Challenge> {
        headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(Challenge::parse)
    }

    /// The first `Bearer` challenge in one header value. A value whose
    /// later challenges fail to parse still yields a `Bearer` one before
    /// them: one malformed scheme must not hide the one this client needs.
    pub fn parse(value: &str) -> Option<Challenge> {
        let bearer = http_auth::parser::ChallengeParser::new(value)
            .map_while(Result::ok)
            .find(|challenge| challenge.scheme.eq_ignore_ascii_case("bearer"))?;
        let mut challenge = Challenge::default();
        for (name, value) in &bearer.params {
            let value = value.to_unescaped();
            match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => {
                    challenge.scope = Some(value.split_ascii_whitespace().map(str::to_owned).collect())
                }
                "error" => challenge.error = Some(value),
                "error_description" => challenge.error_description = Some(value),
                _ => {}
            }
        }
        Some(challenge)
    }

    /// Whether the server says the token lacks scope (a step-up).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

#[cfg(test)]
mod tests {
    use super::Challenge;
    use reqwest::header::{HeaderMap, HeaderValue, WWW_AUTHENTICATE};

    #[test]
    fn reads_the_mcp_parameters() {
        let parsed = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp", error_description="Scope upgrade will never succeed""#,
        );
        let Some(challenge) = parsed else {
            panic!("no challenge parsed");
        };
        assert!(challenge.insufficient_scope());
        assert_eq!(
            challenge.scope,
            Some(vec!["mcp:basic".to_owned(), "mcp:write".to_owned()])
        );
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            challenge.error_description.as_deref(),
            Some("Scope upgrade will never succeed")
        );
    }

    #[test]
    fn scheme_and_names_are_case_insensitive_and_tokens_allowed() {
        let parsed = Challenge::parse("bearer Error=invalid_token, SCOPE=read");
        assert_eq!(
            parsed,
            Some(Challenge {
                error: Some("invalid_token".into()),
                scope: Some(vec!["read".into()]),
                ..Challenge::default()
            })
        );
    }

    #[test]
    fn finds_bearer_after_another_scheme_and_unescapes() {
        let parsed = Challenge::parse(r#"Basic realm="x, y", Bearer realm="a\"b", scope="s""#);
        assert_eq!(parsed.and_then(|c| c.scope), Some(vec!["s".to_owned()]));
    }

    #[test]
    fn bare_bearer_has_no_parameters() {
        assert_eq!(Challenge::parse("Bearer"), Some(Challenge::default()));
    }

    #[test]
    fn no_bearer_is_none() {
        assert_eq!(Challenge::parse(r#"Basic realm="x""#), None);
        assert_eq!(Challenge::parse(""), None);
        assert_eq!(Challenge::parse("Bearer scope=\"unterminated"), None);
    }

    #[test]
    fn from_headers_looks_at_every_value() {
        let mut headers = HeaderMap::new();
        headers.append(WWW_AUTHENTICATE, HeaderValue::from_static("Negotiate"));
        headers.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Bearer scope="a b""#),
        );
        let scope = Challenge::from_headers(&headers).and_then(|c| c.scope);
        assert_eq!(scope, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(Challenge::from_headers(&HeaderMap::new()), None);
    }
}
