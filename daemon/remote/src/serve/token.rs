//! The bearer token: made, kept in a file only the user reads, compared
//! in constant time.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rand::RngCore;
use subtle::ConstantTimeEq;

use super::ServeError;
use super::settings::Token;

/// The token clients must present, if any.
#[derive(Clone)]
pub struct Bearer(Option<String>);

impl std::fmt::Debug for Bearer {
    // Never the token itself: it would end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Bearer(required)"
        } else {
            "Bearer(none)"
        })
    }
}

impl Bearer {
    /// No token required.
    pub fn none() -> Bearer {
        Bearer(None)
    }

    /// Whether a token is required.
    pub fn is_required(&self) -> bool {
        self.0.is_some()
    }

    /// Reads or makes the token `setting` asks for; for a made one, also
    /// returns the file it was written to.
    pub fn load(setting: &Token) -> Result<(Bearer, Option<PathBuf>), ServeError> {
        match setting {
            Token::None => Ok((Bearer::none(), None)),
            Token::File(path) => Ok((Bearer(Some(read(path)?)), None)),
            Token::Generate(path) => {
                let path = match path {
                    Some(path) => path.clone(),
                    None => default_path()?,
                };
                let token = random_hex(32);
                write(&path, &token)?;
                Ok((Bearer(Some(token)), Some(path)))
            }
        }
    }

    /// True when no token is required or `authorization` (the header's
    /// value) presents it.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(expected) = &self.0 else { return true };
        let Some(presented) = authorization.and_then(|value| value.strip_prefix(b"Bearer ")) else {
            return false;
        };
        // The length may leak (it is fixed anyway); the bytes may not.
        presented.ct_eq(expected.as_bytes()).into()
    }
}

/// `$XDG_RUNTIME_DIR/elicitd/serve-token`.
pub fn default_path() -> Result<PathBuf, ServeError> {
    let base = directories::BaseDirs::new().ok_or(ServeError::NoRuntimeDir)?;
    let runtime = base.runtime_dir().ok_or(ServeError::NoRuntimeDir)?;
    Ok(runtime.join("elicitd").join("serve-token"))
}

/// `bytes` random bytes as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut raw);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

fn read(path: &Path) -> Result<String, ServeError> {
    let text = std::fs::read_to_string(path).map_err(|source| ServeError::TokenFile {
        path: path.to_owned(),
        source,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ServeError::EmptyToken(path.to_owned()));
    }
    Ok(token.to_owned())
}

/// Writes `token` to `path`, readable by the user alone; a directory made
/// for it is the user's alone too.
fn write(path: &Path, token: &str) -> Result<(), ServeError> {
    let failed = |source| ServeError::TokenFile {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(failed)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(failed)?;
    // A file that existed keeps its mode through open: narrow it first.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(failed)?;
    file.write_all(format!("{token}\n").as_bytes()).map_err(failed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let bearer = Bearer(Some("abc".into()));
        assert!(bearer.admits(Some(b"Bearer abc")));
        assert!(!bearer.admits(Some(b"Bearer abd")));
        assert!(!bearer.admits(Some(b"Bearer ab")));
        assert!(!bearer.admits(Some(b"abc")));
        assert!(!bearer.admits(None));
        assert!(Bearer::none().admits(None));
    }

    #[test]
    fn a_made_token_is_written_for_the_user_alone() -> Result<(), ServeError> {
        let dir = std::env::temp_dir().join(format!("elicit-token-{}", random_hex(4)));
        let path = dir.join("sub/token");
        let (bearer, written) = Bearer::load(&Token::Generate(Some(path.clone())))?;
        assert_eq!(written.as_deref(), Some(path.as_path()));
        let meta = std::fs::metadata(&path).map_err(|source| ServeError::TokenFile {
            path: path.clone(),
            source,
        })?;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let (again, _) = Bearer::load(&Token::File(path.clone()))?;
        assert_eq!(bearer.0, again.0);
        assert_eq!(bearer.0.as_ref().map(String::len), Some(64));
        let _ = std::fs::remove_dir_all(dir);
        Ok(())
    }
}
