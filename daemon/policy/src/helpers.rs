//! The functions rules call: verdicts, and small text and path tests.

use std::net::IpAddr;
use std::path::{Component, Path, PathBuf};

use rhai::{Array, Dynamic, Engine, ImmutableString, Map};

/// Registers the rule API's helper functions.
pub(crate) fn register(engine: &mut Engine) {
    for name in ["ask", "decline", "cancel", "accept"] {
        engine.register_fn(name, move || verdict(name, None, None));
    }
    for name in ["ask", "decline", "cancel"] {
        engine.register_fn(name, move |reason: ImmutableString| {
            verdict(name, Some(reason), None)
        });
    }
    engine.register_fn("accept", |content: Map| verdict("accept", None, Some(content)));
    engine.register_fn("accept", |content: Map, reason: ImmutableString| {
        verdict("accept", Some(reason), Some(content))
    });
    engine.register_fn("words", |text: ImmutableString| words(&text));
    // Absent titles and descriptions are `()`; they have no words.
    engine.register_fn("words", |_: ()| Array::new());
    engine.register_fn("index_of_key", index_of_key);
    engine.register_fn("is_within", |path: ImmutableString, dir: ImmutableString| {
        is_within(&path, &dir)
    });
    engine.register_fn("is_within", |_: (), _: ImmutableString| false);
    engine.register_fn("is_loopback", |host: ImmutableString| is_loopback(&host));
    engine.register_fn("is_loopback", |_: ()| false);
}

/// A verdict as scripts see it: `#{verdict: "decline", reason: "…"}`.
fn verdict(name: &str, reason: Option<ImmutableString>, content: Option<Map>) -> Map {
    let mut map = Map::new();
    map.insert("verdict".into(), Dynamic::from(ImmutableString::from(name)));
    if let Some(reason) = reason {
        map.insert("reason".into(), Dynamic::from(reason));
    }
    if let Some(content) = content {
        map.insert("content".into(), Dynamic::from_map(content));
    }
    map
}

/// The words of an identifier or a sentence, lower-cased: split at anything
/// but letters and digits and at camelCase humps, so that `apiKey`,
/// `api_key`, `API-Key` and "API key" all give `["api", "key"]`.
pub(crate) fn words(text: &str) -> Array {
    crate::guard::split(text)
        .into_iter()
        .map(|word| Dynamic::from(ImmutableString::from(word.to_lowercase())))
        .collect()
}

/// The index of the first item of `array`, at or after `start`, that is a
/// key of `map`, or -1: a scan that costs one operation instead of one per
/// item, so that long descriptions stay cheap to search.
pub(crate) fn index_of_key(array: &mut Array, map: Map, start: i64) -> i64 {
    let start = usize::try_from(start).unwrap_or(0);
    array
        .iter()
        .enumerate()
        .skip(start)
        .find(|(_, item)| {
            item.read_lock::<ImmutableString>()
                .is_some_and(|key| map.contains_key(key.as_str()))
        })
        .and_then(|(i, _)| i64::try_from(i).ok())
        .unwrap_or(-1)
}

/// Whether `path` is `dir` or lies below it, compared by whole components
/// (`/src/app2` is not within `/src/app`) after both are normalised
/// ([`normalise`]): `/home/me/src/shop/../../../../tmp` is `/tmp`, not a
/// directory of the shop. A relative path (or directory) is within nothing:
/// relative to what, the client alone would know.
pub(crate) fn is_within(path: &str, dir: &str) -> bool {
    match (normalise(path), normalise(dir)) {
        (Some(path), Some(dir)) => path.starts_with(dir),
        _ => false,
    }
}

/// An absolute path with `.`, `..` and repeated slashes resolved by text
/// alone (the daemon cannot look at the client's file system, and must not
/// follow its symlinks); `None` for a relative path. `..` at the root stays
/// at the root, as the kernel has it.
pub(crate) fn normalise(path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// Whether a URL host names this machine: `localhost` or a loopback address
/// (IPv6 in brackets, as URLs write it).
pub(crate) fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(text: &str) -> Vec<String> {
        words(text).into_iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn words_split_identifiers_and_sentences() {
        assert_eq!(strings("apiKey"), ["api", "key"]);
        assert_eq!(strings("API_KEY"), ["api", "key"]);
        assert_eq!(strings("APIKey"), ["api", "key"]);
        assert_eq!(
            strings("Your GitHub token, please"),
            ["your", "git", "hub", "token", "please"]
        );
        assert_eq!(strings("cvv2"), ["cvv2"]);
        assert_eq!(strings(""), Vec::<String>::new());
    }

    #[test]
    fn index_of_key_finds_the_next_key() {
        let mut array = words("a b c b");
        let mut map = Map::new();
        map.insert("b".into(), Dynamic::TRUE);
        assert_eq!(index_of_key(&mut array, map.clone(), 0), 1);
        assert_eq!(index_of_key(&mut array, map.clone(), 2), 3);
        assert_eq!(index_of_key(&mut array, map.clone(), 4), -1);
        assert_eq!(index_of_key(&mut array, map, -5), 1);
    }

    #[test]
    fn within_compares_components() {
        assert!(is_within("/src/app/sub", "/src/app"));
        assert!(is_within("/src/app", "/src/app/"));
        assert!(!is_within("/src/app2", "/src/app"));
    }

    #[test]
    fn within_normalises_and_refuses_relative_paths() {
        assert!(!is_within(
            "/home/me/src/shop/../../../../tmp",
            "/home/me/src/shop"
        ));
        assert!(!is_within("/home/me/src/shop/..", "/home/me/src/shop"));
        assert!(is_within("/home/me/src/shop/./sub/../x", "/home/me/src/shop"));
        assert!(is_within("//home///me/src/shop//x", "/home/me/src/shop"));
        assert!(is_within("/home/me/src/shop/x", "/home/me/src/other/../shop"));
        assert!(!is_within("/../../etc", "/home"));
        assert!(!is_within("shop/x", "shop"));
        assert!(!is_within("/home/me/src/shop/x", "src/shop"));
        assert!(!is_within("", "/"));
        assert_eq!(normalise("/a/b/../../../c/."), Some(PathBuf::from("/c")));
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("localhost"));
        assert!(is_loopback("127.0.0.1"));
        assert!(is_loopback("[::1]"));
        assert!(!is_loopback("127.evil.example"));
        assert!(!is_loopback("example.com"));
    }
}
