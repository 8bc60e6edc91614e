//! Where tokens are kept between runs: the desktop's Secret Service, or,
//! where none answers (a headless box, a test), a file readable by the
//! user alone under `$XDG_STATE_HOME/elicitd/tokens/`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use super::error::AuthError;
use super::tokens::Tokens;

/// Which store to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StoreChoice {
    /// The Secret Service, else the file (with one warning).
    #[default]
    Auto,
    /// The Secret Service only.
    SecretService,
    /// Files in this directory only.
    File(PathBuf),
    /// Nowhere: tokens live as long as the process.
    Memory,
}

/// The key of one record: the resource and who the client is configured
/// as (its id, its metadata document URL, or `dynamic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The MCP server's canonical URL.
    pub resource: String,
    /// The configured client identity.
    pub client: String,
}

/// How long a Secret Service call may take; past it the file is used.
/// Generous, since unlocking a collection may prompt the user.
const SERVICE_PATIENCE: Duration = Duration::from_secs(30);

/// The fallback warning is printed once per process.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The token store.
#[derive(Debug)]
pub struct Store {
    choice: StoreChoice,
    /// Set once the Secret Service failed under [`StoreChoice::Auto`].
    use_file: Mutex<bool>,
    /// Why it failed, for the warning.
    fell_back: Mutex<Option<String>>,
}

impl Store {
    /// A store as `choice` says.
    pub fn new(choice: StoreChoice) -> Store {
        Store {
            choice,
            use_file: Mutex::new(false),
            fell_back: Mutex::new(None),
        }
    }

    /// The record for `key`, if one is kept and readable.
    pub async fn load(&self, key: &Key) -> Option<Tokens> {
        let text = match self.backend().await {
            Backend::Memory => return None,
            Backend::Service => match service(secret_service::load(key)).await {
                Ok(found) => found,
                Err(error) => {
                    if !self.service_failed(&error).await {
                        return None;
                    }
                    file::load(&file_path(&self.choice, key)?)
                }
            },
            Backend::File => file::load(&file_path(&self.choice, key)?),
        }?;
        match serde_json::from_str(&text) {
            Ok(tokens) => Some(tokens),
            Err(error) => {
                tracing::warn!(%error, "ignoring a kept token record that does not parse");
                None
            }
        }
    }

    /// Keeps `tokens` under `key`.
    pub async fn save(&self, key: &Key, tokens: &Tokens) -> Result<(), AuthError> {
        let text = serde_json::to_string(tokens).map_err(|e| AuthError::Store(e.to_string()))?;
        match self.backend().await {
            Backend::Memory => Ok(()),
            Backend::Service => match service(secret_service::save(key, &text)).await {
                Ok(()) => Ok(()),
                Err(error) if self.service_failed(&error).await => {
                    self.warn(&error);
                    self.save_file(key, &text)
                }
                Err(error) => Err(AuthError::Store(error)),
            },
            Backend::File => {
                if let Some(error) = self.fell_back.lock().await.as_deref() {
                    self.warn(error);
                }
                self.save_file(key, &text)
            }
        }
    }

    /// Forgets the record for `key` (the server refused its tokens).
    pub async fn forget(&self, key: &Key) {
        match self.backend().await {
            Backend::Memory => {}
            Backend::Service => {
                if let Err(error) = service(secret_service::forget(key)).await {
                    tracing::debug!(%error, "forgetting tokens in the Secret Service failed");
                }
            }
            Backend::File => {
                if let Some(path) = file_path(&self.choice, key) {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
    }

    fn save_file(&self, key: &Key, text: &str) -> Result<(), AuthError> {
        let path = file_path(&self.choice, key)
            .ok_or_else(|| AuthError::Store("no state directory (HOME is not set)".into()))?;
        file::save(&path, text).map_err(|e| AuthError::Store(format!("{}: {e}", path.display())))
    }

    async fn backend(&self) -> Backend {
        match &self.choice {
            StoreChoice::Memory => Backend::Memory,
            StoreChoice::File(_) => Backend::File,
            StoreChoice::SecretService => Backend::Service,
            StoreChoice::Auto if *self.use_file.lock().await => Backend::File,
            StoreChoice::Auto => Backend::Service,
        }
    }

    /// Notes that the Secret Service failed; true when the file takes
    /// over (under [`StoreChoice::Auto`]).
    async fn service_failed(&self, error: &str) -> bool {
        if self.choice != StoreChoice::Auto {
            tracing::warn!(%error, "the Secret Service failed");
            return false;
        }
        *self.use_file.lock().await = true;
        *self.fell_back.lock().await = Some(error.to_owned());
        true
    }

    /// Says once that tokens go to a file; only when tokens are saved,
    /// so that a server that never asks for authorization warns nobody.
    fn warn(&self, error: &str) {
        if !WARNED.swap(true, Ordering::Relaxed) {
            let dir = tokens_dir(&self.choice)
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            eprintln!(
                "elicit: warning: no Secret Service ({error}); keeping MCP authorization tokens in {dir}, readable by you alone"
            );
        }
    }
}

enum Backend {
    Memory,
    Service,
    File,
}

/// Runs a Secret Service call with [`SERVICE_PATIENCE`].
async fn service<T>(call: impl Future<Output = Result<T, oo7::dbus::Error>>) -> Result<T, String> {
    match tokio::time::timeout(SERVICE_PATIENCE, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {} s", SERVICE_PATIENCE.as_secs())),
    }
}

/// The directory of token files.
fn tokens_dir(choice: &StoreChoice) -> Option<PathBuf> {
    match choice {
        StoreChoice::File(dir) => Some(dir.clone()),
        _ => elicit_proto::paths::state_dir().map(|dir| dir.join("tokens")),
    }
}

/// The file of `key`: a hash, so that URLs need no escaping and the
/// directory listing does not show which servers the user signs in to.
fn file_path(choice: &StoreChoice, key: &Key) -> Option<PathBuf> {
    let mut hash = Sha256::new();
    hash.update(key.resource.as_bytes());
    hash.update([0]);
    hash.update(key.client.as_bytes());
    let name: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Some(tokens_dir(choice)?.join(format!("{name}.json")))
}

mod file {
    use super::*;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

    use std::os::unix::fs::MetadataExt;

    /// What an existing token directory is, to the user `own`.
    #[derive(Debug, PartialEq, Eq)]
    pub enum DirState {
        /// Theirs, and closed to everyone else.
        Private,
        /// Theirs, but open to others (its mode).
        Loose(u32),
        /// Someone else's (its owner): its files may be planted.
        Foreign(u32),
    }

    /// Judges a directory owned by `owner` with permission bits `mode`.
    pub fn judge(owner: u32, mode: u32, own: u32) -> DirState {
        if owner != own {
            DirState::Foreign(owner)
        } else if mode & 0o077 != 0 {
            DirState::Loose(mode & 0o7777)
        } else {
            DirState::Private
        }
    }

    /// An existing `dir` is made the user's alone: mode 0700, with a
    /// warning, if it was open to others; an error if it is not theirs
    /// (another user could have put tokens there, or read them).
    pub fn secure_dir(dir: &std::path::Path) -> std::io::Result<()> {
        let metadata = match std::fs::metadata(dir) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        if !metadata.is_dir() {
            return Err(std::io::Error::other("the token directory is not a directory"));
        }
        let own = rustix::process::geteuid().as_raw();
        match judge(metadata.uid(), metadata.mode(), own) {
            DirState::Private => Ok(()),
            DirState::Loose(mode) => {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
                // Said on standard error whatever the log level: the user
                // should know their tokens' folder was open.
                eprintln!(
                    "elicit: warning: the token directory {} was mode {mode:04o}, open to other users: it is 0700 now",
                    dir.display()
                );
                Ok(())
            }
            DirState::Foreign(owner) => Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "the token directory belongs to uid {owner}, not to you (uid {own}): \
                     refusing to keep or read tokens there"
                ),
            )),
        }
    }

    /// The record at `path`, if its directory and the file are the user's.
    pub fn load(path: &std::path::Path) -> Option<String> {
        let dir = path.parent()?;
        if let Err(error) = secure_dir(dir) {
            tracing::warn!(dir = %dir.display(), %error, "not reading kept tokens");
            return None;
        }
        let file = std::fs::File::open(path).ok()?;
        let owner = file.metadata().ok()?.uid();
        if owner != rustix::process::geteuid().as_raw() {
            tracing::warn!(path = %path.display(), owner, "ignoring a token file of another user");
            return None;
        }
        std::io::read_to_string(file).ok()
    }

    /// Writes `text` to `path` atomically, mode 0600, in a directory of
    /// mode 0700: a temporary file (created 0600) renamed over the old.
    pub fn save(path: &std::path::Path, text: &str) -> std::io::Result<()> {
        let dir = path
            .parent()
            .ok_or_else(|| std::io::Error::other("no directory"))?;
        secure_dir(dir)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mut temporary = tempfile::NamedTempFile::new_in(dir)?;
        temporary
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
        temporary.write_all(text.as_bytes())?;
        temporary.as_file().sync_all()?;
        temporary.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

mod secret_service {
    use super::Key;
    use std::collections::HashMap;

    fn attributes(key: &Key) -> HashMap<&str, &str> {
        HashMap::from([
            ("application", "elicit"),
            ("elicit-resource", key.resource.as_str()),
            ("elicit-client", key.client.as_str()),
        ])
    }

    pub async fn load(key: &Key) -> Result<Option<String>, oo7::dbus::Error> {
        let service = oo7::dbus::Service::new().await?;
        let collection = service.default_collection().await?;
        let Some(item) = collection
            .search_items(&attributes(key))
            .await?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let secret = item.secret().await?;
        Ok(String::from_utf8(secret.as_bytes().to_vec()).ok())
    }

    pub async fn save(key: &Key, text: &str) -> Result<(), oo7::dbus::Error> {
        let service = oo7::dbus::Service::new().await?;
        let collection = service.default_collection().await?;
        let label = format!("elicit: MCP authorization for {}", key.resource);
        collection
            .create_item(&label, &attributes(key), text, true, None)
            .await?;
        Ok(())
    }

    pub async fn forget(key: &Key) -> Result<(), oo7::dbus::Error> {
        let service = oo7::dbus::Service::new().await?;
        let collection = service.default_collection().await?;
        for item in collection.search_items(&attributes(key)).await? {
            item.delete(None).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::register::{Method, Registered};
    use crate::auth::secret::Secret;

    fn key() -> Key {
        Key {
            resource: "http://localhost:1/mcp".into(),
            client: "dynamic".into(),
        }
    }

    fn tokens() -> Tokens {
        Tokens {
            client: Registered {
                id: "c".into(),
                secret: None,
                method: Method::None,
            },
            access_token: Secret::new("a"),
            refresh_token: None,
            expires_at: Some(5),
            scopes: vec!["s".into()],
            token_endpoint: "http://localhost:2/token".into(),
            resource: "http://localhost:1/mcp".into(),
            redirect_port: Some(4),
        }
    }

    #[tokio::test]
    async fn file_round_trip_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(StoreChoice::File(dir.path().join("tokens")));
        assert_eq!(store.load(&key()).await, None);
        store.save(&key(), &tokens()).await.unwrap();
        assert_eq!(store.load(&key()).await, Some(tokens()));
        let path = file_path(&StoreChoice::File(dir.path().join("tokens")), &key()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        store.forget(&key()).await;
        assert_eq!(store.load(&key()).await, None);
    }

    #[test]
    fn a_token_directory_is_judged_by_owner_then_mode() {
        use file::{DirState, judge};
        assert_eq!(judge(1000, 0o40700, 1000), DirState::Private);
        assert_eq!(judge(1000, 0o40777, 1000), DirState::Loose(0o777));
        assert_eq!(judge(1000, 0o40750, 1000), DirState::Loose(0o750));
        assert_eq!(judge(0, 0o40700, 1000), DirState::Foreign(0));
        assert_eq!(judge(65534, 0o40777, 1000), DirState::Foreign(65534));
    }

    #[tokio::test]
    async fn an_open_token_directory_is_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let tokens_dir = dir.path().join("tokens");
        std::fs::create_dir(&tokens_dir).unwrap();
        std::fs::set_permissions(&tokens_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let store = Store::new(StoreChoice::File(tokens_dir.clone()));
        store.save(&key(), &tokens()).await.unwrap();
        let mode = std::fs::metadata(&tokens_dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(store.load(&key()).await, Some(tokens()));
    }

    /// A directory of another user (made so with chown, which needs root:
    /// the tests run as root in CI) is neither written nor read.
    #[tokio::test]
    async fn a_token_directory_of_another_user_is_refused() {
        if !rustix::process::geteuid().is_root() {
            assert!(
                std::env::var_os("CI").is_none(),
                "this test needs root (chown) under CI"
            );
            eprintln!("skipped: chown needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tokens_dir = dir.path().join("tokens");
        let store = Store::new(StoreChoice::File(tokens_dir.clone()));
        store.save(&key(), &tokens()).await.unwrap();
        std::os::unix::fs::chown(&tokens_dir, Some(65534), Some(65534)).unwrap();
        assert_eq!(store.load(&key()).await, None, "a planted record is not read");
        let error = store.save(&key(), &tokens()).await.unwrap_err().to_string();
        assert!(error.contains("uid 65534"), "{error}");
    }

    #[test]
    fn keys_name_distinct_files() {
        let choice = StoreChoice::File("/x".into());
        let other = Key {
            client: "another".into(),
            ..key()
        };
        assert_ne!(file_path(&choice, &key()), file_path(&choice, &other));
    }
}
