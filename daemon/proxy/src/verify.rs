//! What the proxy knows about the server it starts, as opposed to what the
//! server says about itself: the executable, found as `exec` finds it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The executable `program` names, as the proxy's own `PATH` lookup finds
/// it (a name with a slash is a path, relative to the working directory),
/// with symlinks resolved; `None` when no such executable exists.
pub fn resolve_executable(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        return executable(Path::new(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        // An empty entry means the working directory, as for execvp.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        executable(&dir.join(program))
    })
}

fn executable(candidate: &Path) -> Option<PathBuf> {
    let resolved = candidate.canonicalize().ok()?;
    let metadata = resolved.metadata().ok()?;
    (metadata.is_file() && metadata.permissions().mode() & 0o111 != 0).then_some(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_on_path_and_resolves_symlinks() {
        let sh = resolve_executable("sh").expect("sh is on PATH");
        assert!(sh.is_absolute());
        assert_eq!(sh, sh.canonicalize().expect("exists"));
        assert_eq!(
            resolve_executable("/bin/sh"),
            Path::new("/bin/sh").canonicalize().ok()
        );
        assert_eq!(resolve_executable("no-such-program-elicitd-test"), None);
        assert_eq!(resolve_executable("/etc/passwd"), None, "not executable");
        assert_eq!(resolve_executable(""), None);
    }
}
