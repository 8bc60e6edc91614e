//! Writing a host file as a careful person would: the new text goes to a
//! temporary file in the same folder with the same mode and owner, is
//! synced, and replaces the file by a rename, and only if the file still
//! holds what the edit was made from (a host may have rewritten it
//! meanwhile: Claude Code rewrites `~/.claude.json` at every start).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// What became of a replacement.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    /// The file holds the new text.
    Done,
    /// The file no longer held the text the edit was made from: nothing
    /// was written; read it again and start over.
    Changed,
}

/// Reads a host file as text.
pub fn read(path: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(path).map_err(Error::io(path))?;
    String::from_utf8(bytes).map_err(|_| Error::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
    })
}

/// The file a path names, through symbolic links: a linked config (a
/// dotfiles repository) is edited where it is, and the link stays.
fn target(path: &Path) -> Result<PathBuf, Error> {
    std::fs::canonicalize(path).map_err(Error::io(path))
}

/// Replaces `path`'s content with `new` if it still is `expected`.
pub fn replace(path: &Path, expected: &str, new: &str) -> Result<Written, Error> {
    let path = target(path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let meta = std::fs::metadata(&path).map_err(Error::io(&path))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".elicit-wrap.")
        .tempfile_in(dir)
        .map_err(Error::io(dir))?;
    let file = temp.as_file_mut();
    file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))
        .map_err(Error::io(&path))?;
    // Same owner: root editing a user's file must not hand it to root. As
    // the owner, a chown to oneself is a no-op; anything else we cannot
    // do is left as the system made it.
    let same = meta.uid() == rustix::process::geteuid().as_raw()
        && meta.gid() == rustix::process::getegid().as_raw();
    if !same {
        let _ = rustix::fs::fchown(
            &*file,
            Some(rustix::process::Uid::from_raw(meta.uid())),
            Some(rustix::process::Gid::from_raw(meta.gid())),
        );
    }
    file.write_all(new.as_bytes()).map_err(Error::io(&path))?;
    file.sync_all().map_err(Error::io(&path))?;
    // Last look before the rename: the window in which another writer's
    // change could be lost is this read to the rename, not the whole edit.
    let now = std::fs::read(&path).map_err(Error::io(&path))?;
    if now != expected.as_bytes() {
        return Ok(Written::Changed);
    }
    temp.persist(&path).map_err(|e| Error::Io {
        path: path.clone(),
        source: e.error,
    })?;
    sync_dir(dir);
    Ok(Written::Done)
}

/// Writes `bytes` to `path` (mode 0600) atomically, whatever was there.
pub fn replace_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut temp = tempfile::Builder::new()
        .prefix(".elicit-wrap.")
        .tempfile_in(dir)
        .map_err(Error::io(dir))?;
    let file = temp.as_file_mut();
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(Error::io(path))?;
    file.write_all(bytes).map_err(Error::io(path))?;
    file.sync_all().map_err(Error::io(path))?;
    temp.persist(path).map_err(|e| Error::Io {
        path: path.to_owned(),
        source: e.error,
    })?;
    sync_dir(dir);
    Ok(())
}

/// Makes the rename itself durable; a folder that cannot be synced
/// (some file systems refuse) still holds the new file.
fn sync_dir(dir: &Path) {
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_is_kept_and_a_changed_file_is_not_overwritten() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("c.json");
        std::fs::write(&path, "{}").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        assert_eq!(replace(&path, "{}", "{\"a\":1}").expect("replace"), Written::Done);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{\"a\":1}");
        assert_eq!(std::fs::metadata(&path).expect("meta").mode() & 0o777, 0o640);
        assert_eq!(
            replace(&path, "{}", "{\"b\":1}").expect("replace"),
            Written::Changed
        );
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{\"a\":1}");
        // Nothing left behind.
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn a_linked_file_is_edited_where_it_is() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::fs::write(&real, "{}").expect("write");
        std::os::unix::fs::symlink(&real, &link).expect("link");
        assert_eq!(replace(&link, "{}", "[]").expect("replace"), Written::Done);
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).expect("read"), "[]");
    }
}
