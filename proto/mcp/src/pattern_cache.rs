//! Compiled patterns, kept only within one byte budget for the process.
//!
//! A compiled pattern may be a thousand times its source (`.{750}` is
//! 1 MB), so a form keeps sources only ([`crate::Pattern`]), and whatever
//! holds forms (the broker, a front-end) costs what its forms' text says.
//! The patterns compiled lately stay here for the checks that come in
//! bursts: a request checked, then its defaults; a front-end checking a
//! field as the user types. Everything kept counts against [`BUDGET`],
//! across all forms: the least recently used goes first.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use lru::LruCache;

use crate::pattern::{PatternError, Regex, compile};

/// Bytes of compiled programs (and their sources) kept at most.
pub(crate) const BUDGET: usize = 4 << 20;

/// Entries kept at most, whatever their size: small patterns are cheap to
/// keep, but each costs a map slot.
const MAX_ENTRIES: usize = 1024;

/// The kept programs, by source, and the bytes they hold.
struct Cache {
    entries: LruCache<String, Arc<Regex>>,
    bytes: usize,
}

fn cache() -> MutexGuard<'static, Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let cap = NonZeroUsize::new(MAX_ENTRIES).unwrap_or(NonZeroUsize::MIN);
            Mutex::new(Cache {
                entries: LruCache::new(cap),
                bytes: 0,
            })
        })
        .lock()
        // The cache is consistent after every statement: a panic elsewhere
        // while it was held leaves nothing half done.
        .unwrap_or_else(PoisonError::into_inner)
}

/// What one entry counts against the budget.
fn cost(source: &str, regex: &Regex) -> usize {
    source.len() + regex.bytes()
}

/// `source` compiled: from the cache, or compiled now (outside the lock,
/// so that other checks go on meanwhile) and kept if it fits.
pub(crate) fn compiled(source: &str) -> Result<Arc<Regex>, PatternError> {
    if let Some(regex) = cache().entries.get(source) {
        return Ok(regex.clone());
    }
    let regex = Arc::new(compile(source)?);
    let size = cost(source, &regex);
    // One pattern may not take more than a quarter: the rest stays for
    // the others of its form.
    if size <= BUDGET / 4 {
        let mut cache = cache();
        if let Some((old_source, old)) = cache.entries.push(source.to_owned(), regex.clone()) {
            cache.bytes -= cost(&old_source, &old);
        }
        cache.bytes += size;
        while cache.bytes > BUDGET {
            let Some((old_source, old)) = cache.entries.pop_lru() else {
                break;
            };
            cache.bytes -= cost(&old_source, &old);
        }
    }
    Ok(regex)
}

/// Whether `text` contains a match of `source`; a source that does not
/// compile matches nothing.
pub(crate) fn is_match(source: &str, text: &str) -> bool {
    compiled(source).is_ok_and(|regex| regex.is_match(text))
}

/// The bytes kept now.
#[cfg(test)]
fn kept_bytes() -> usize {
    cache().bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_programs_stay_within_the_budget() {
        // 64 distinct patterns of some 140 KB each: 9 MB if all were kept.
        for n in 0..64 {
            let source = format!("^.{{1,{}}}$", 90 + n);
            assert!(is_match(&source, "some text"), "{source}");
            assert!(kept_bytes() <= BUDGET, "{} kept after {n}", kept_bytes());
        }
        assert!(kept_bytes() > BUDGET / 2, "recent patterns are kept");
    }

    #[test]
    fn a_pattern_over_the_size_limit_is_refused_and_matches_nothing() {
        let source = ".{750}";
        assert!(matches!(compiled(source), Err(PatternError::Unsupported(_))));
        assert!(!is_match(source, &"x".repeat(800)));
    }
}
