//! `elicit-i18n`: the words elicitd's own programs show, in the user's
//! language.
//!
//! elicit-gtk, elicit-tui, elicit-notify and the `elicit` CLI's
//! human-readable output look their strings up through gettext (glibc's,
//! through `gettext-rs`), in one text domain, [`DOMAIN`], so that a
//! string shared by all of them through `elicit-form` is translated once.
//! Text that an MCP server sent (messages, titles, descriptions) never goes
//! through here: it is shown as sent.
//!
//! Marking a string: [`tr`], [`trn`] for a number-dependent one, and
//! [`fill`] to put values into the `{name}` placeholders of a translated
//! template (translators may move them). `po/update-pot.sh` finds the
//! strings by these names with `xgettext`.

mod locale_dir;

use std::fmt::Display;

pub use locale_dir::{LOCALEDIR_ENV, locale_dir};

/// The one text domain of every elicitd program: its catalogues are
/// `LOCALEDIR/LANG/LC_MESSAGES/elicitd.mo`.
pub const DOMAIN: &str = "elicitd";

/// Sets the program's locale from the environment (`LANG`, `LC_*`,
/// `LANGUAGE`) and binds [`DOMAIN`] to [`locale_dir`], for messages,
/// dates and numbers alike. Call it first thing in `main`.
///
/// Failing quietly is right here: without a usable locale or catalogue
/// every string stays English, which is what the user would get anyway.
///
/// Call it before the program starts any thread: `setlocale` changes
/// process-wide state that other threads may be reading.
pub fn init() {
    // SAFETY: called first in `main`, before any other thread exists
    // (see above), so nothing reads the locale while it changes.
    #[allow(unsafe_code)]
    unsafe {
        gettextrs::setlocale(gettextrs::LocaleCategory::LcAll, "");
    }
    let _ = gettextrs::bindtextdomain(DOMAIN, locale_dir());
    let _ = gettextrs::bind_textdomain_codeset(DOMAIN, "UTF-8");
    let _ = gettextrs::textdomain(DOMAIN);
}

/// The translation of `msgid`, or `msgid` itself where there is none.
pub fn tr(msgid: &str) -> String {
    gettextrs::dgettext(DOMAIN, msgid)
}

/// The translation of `singular`/`plural` for `n` of something, by the
/// plural rule of the user's language; `{n}` in it is replaced by `n`.
pub fn trn(singular: &str, plural: &str, n: usize) -> String {
    // ngettext takes a u32; past that every language uses its plural.
    let count = u32::try_from(n).unwrap_or(u32::MAX);
    gettextrs::dngettext(DOMAIN, singular, plural, count).replace("{n}", &n.to_string())
}

/// `template` with each `{name}` replaced by its value: translations put
/// the values where their grammar wants them, which `format!`'s fixed
/// positions could not do. A value is put in once, never searched again,
/// so a server's text that holds `{…}` itself stays as sent.
pub fn fill(template: &str, values: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let named = after.find('}').and_then(|close| {
            values
                .iter()
                .find(|(name, _)| *name == &after[..close])
                .map(|v| (close, v))
        });
        match named {
            Some((close, (_, value))) => {
                out.push_str(&value.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_puts_values_once_and_keeps_other_braces() {
        let server = "evil {who}";
        assert_eq!(
            fill("{who} asks {server}, {x}", &[("server", &server), ("who", &"me")]),
            "me asks evil {who}, {x}"
        );
        assert_eq!(fill("no { close", &[("a", &1)]), "no { close");
    }

    #[test]
    fn untranslated_strings_are_the_english_ones() {
        assert_eq!(tr("Accept"), "Accept");
        assert_eq!(trn("{n} field", "{n} fields", 1), "1 field");
        assert_eq!(trn("{n} field", "{n} fields", 3), "3 fields");
    }
}
