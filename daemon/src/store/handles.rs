//! The sled database and the trees the broker uses, as the storage
//! thread opens them.

use std::path::Path;

/// The database and the trees the broker uses.
pub(super) struct Handles {
    pub(super) db: sled::Db,
    pub(super) sessions: sled::Tree,
    pub(super) forms: sled::Tree,
    pub(super) history: sled::Tree,
    pub(super) registrations: sled::Tree,
    pub(super) remembered: sled::Tree,
}

impl Handles {
    /// Opens the database in `dir` with its trees.
    pub(super) fn open(dir: &Path) -> Result<Handles, sled::Error> {
        // No periodic flush: every group is flushed by this thread, and
        // sled's 500 ms flusher would wake an idle daemon twice a second.
        let db = sled::Config::new()
            .path(dir)
            .mode(sled::Mode::LowSpace)
            .flush_every_ms(None)
            .open()?;
        Ok(Handles {
            sessions: db.open_tree("sessions")?,
            forms: db.open_tree("forms")?,
            history: db.open_tree("history")?,
            registrations: db.open_tree("frontends")?,
            remembered: db.open_tree("remembered")?,
            db,
        })
    }
}
