//! Which scopes to ask for (MCP "Scope Selection Strategy"): the
//! challenge's, else every scope the resource metadata lists, else none;
//! a configured list overrides both. A step-up asks for the union of what
//! was granted and what the server now wants.

/// The scopes of a first authorization.
pub fn choose(
    configured: Option<&[String]>,
    challenge: Option<&[String]>,
    supported: Option<&[String]>,
) -> Vec<String> {
    let chosen = configured
        .or(challenge.filter(|scopes| !scopes.is_empty()))
        .or(supported)
        .unwrap_or_default();
    union(&[], chosen)
}

/// `held` followed by whichever of `wanted` it lacks, without duplicates.
pub fn union(held: &[String], wanted: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::with_capacity(held.len() + wanted.len());
    for scope in held.iter().chain(wanted) {
        if !scope.is_empty() && !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::{choose, union};

    fn list(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn challenge_first_then_supported_then_none() {
        let challenge = list("mcp:basic");
        let supported = list("mcp:basic mcp:read mcp:write");
        assert_eq!(choose(None, Some(&challenge), Some(&supported)), challenge);
        assert_eq!(choose(None, None, Some(&supported)), supported);
        assert_eq!(choose(None, Some(&[]), Some(&supported)), supported);
        assert!(choose(None, None, None).is_empty());
    }

    #[test]
    fn configured_overrides() {
        let configured = list("files:read");
        assert_eq!(
            choose(Some(&configured), Some(&list("a")), Some(&list("b"))),
            configured
        );
    }

    #[test]
    fn union_keeps_order_and_drops_duplicates() {
        assert_eq!(union(&list("a b"), &list("b c a d")), list("a b c d"));
        assert_eq!(union(&[], &list("x x")), list("x"));
    }
}
