//! A form nobody shows: the host's user is told where to answer it.

use super::{AskId, Core, Out};

impl Core {
    /// The broker says nobody shows form `form` (the proxy's `ask`) and
    /// no front-end could be started for it (`why`): without this, the
    /// form would wait unseen until the host gives up. Said once per form,
    /// as a log message the host shows (and on standard error), while the
    /// form is still asked.
    pub(super) fn on_unseen(&mut self, ask: AskId, form: &str, why: &str, out: &mut Out) {
        if !self.asks.contains_key(&ask) {
            return;
        }
        self.warn(
            format!(
                "elicit proxy: the server's form {form} waits in elicitd, but no front-end shows it ({why}). \
                 Answer it in a terminal with `elicit-tui`, or with `elicit answer {form} --accept-file -` \
                 (or --decline, --cancel); `elicit list` shows it"
            ),
            out,
        );
    }
}
