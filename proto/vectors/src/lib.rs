//! `elicit-vectors`: the request and answer vectors of `proto/vectors/`,
//! and where a test run finds each set of them.
//!
//! A test checks every set that [`sets`] returns: the copy in this
//! repository always (a clone nobody prepared passes its own tests), the
//! project's shared folder `../shared/vectors/` beside the checkout when it
//! exists, and the folder named by [`ENV`] when that is set. One helper for
//! every test that reads them, so that they agree on where to look.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The environment variable naming one more folder of vectors to check.
pub const ENV: &str = "ELICIT_VECTORS";

/// One folder of vectors (`requests.json`, `contents.json`).
#[derive(Debug, Clone)]
pub struct VectorSet {
    name: String,
    dir: PathBuf,
}

impl VectorSet {
    /// What the set is, for failure messages: `in-repo`, `shared` or
    /// `$ELICIT_VECTORS`, with its folder.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The folder holding the set's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cases of `file` (a JSON array), e.g. `requests.json`.
    ///
    /// # Panics
    ///
    /// When the file is missing or is not a JSON array of cases: a test
    /// that reads vectors cannot go on without them, and the message names
    /// the file.
    pub fn load(&self, file: &str) -> Vec<Value> {
        let path = self.dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: cannot read {}: {e}", self.name, path.display()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: {} is not a JSON array: {e}", self.name, path.display()))
    }
}

/// The copy in this repository, `proto/vectors/`.
pub fn in_repo() -> VectorSet {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    VectorSet {
        name: format!("in-repo vectors ({})", dir.display()),
        dir,
    }
}

/// Every set a test run checks: [`in_repo`]; `../shared/vectors` beside
/// the checkout when that folder exists; the folder [`ENV`] names when it
/// is set (a missing one fails the test that loads it: it was asked for).
/// A folder named twice is checked once.
pub fn sets() -> Vec<VectorSet> {
    let mut sets = vec![in_repo()];
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors");
    if shared.is_dir() {
        sets.push(VectorSet {
            name: format!("shared vectors ({})", shared.display()),
            dir: shared,
        });
    }
    if let Some(dir) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        sets.push(VectorSet {
            name: format!("${ENV} ({})", dir.display()),
            dir,
        });
    }
    let mut seen = Vec::new();
    sets.retain(|set| {
        let key = set.dir.canonicalize().unwrap_or_else(|_| set.dir.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_in_repo_copy_is_always_a_set_and_holds_both_files() {
        let sets = sets();
        assert_eq!(sets[0].dir(), in_repo().dir());
        assert!(in_repo().load("requests.json").len() >= 30);
        assert!(in_repo().load("contents.json").len() >= 30);
    }
}
