//! Running a program in another language: the catalogues compiled from
//! `po/` by `po/build.sh`, and a locale that glibc has generated.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The compiled catalogues (`DIR/de/LC_MESSAGES/elicitd.mo`…), built once
/// per test process with `po/build.sh` from the `.po` files as they are.
pub fn catalogues() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Beside the binaries, but not at `share/locale` where they would
        // find it unasked: only the tests that name a language use it.
        let dir = crate::binary("elicit")
            .parent()
            .expect("a binary lives in a folder")
            .join("test-locale");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../po/build.sh");
        let output = Command::new("sh")
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("sh runs po/build.sh");
        assert!(
            output.status.success(),
            "po/build.sh failed (msgfmt comes with the gettext package; run tests/setup): {}",
            String::from_utf8_lossy(&output.stderr)
        );
        dir
    })
}

/// The environment that runs a program in `locale` (`de_DE.UTF-8`) with
/// the catalogues of [`catalogues`]. Fails the test when glibc has not
/// generated `locale`: a program would fall back to English and the test
/// would prove nothing.
pub fn language_env(locale: &str) -> Vec<(&'static str, String)> {
    assert!(
        generated(locale),
        "the locale {locale} is not generated: run tests/setup (the locales package and locale-gen)"
    );
    vec![
        ("LANG", locale.to_owned()),
        // Set to empty, glibc ignores them; left as the caller's, they
        // would win over LANG.
        ("LC_ALL", String::new()),
        ("LC_MESSAGES", String::new()),
        ("LANGUAGE", String::new()),
        ("ELICITD_LOCALEDIR", catalogues().display().to_string()),
    ]
}

/// [`language_env`] as `NAME='value'` words for a shell command line.
pub fn language_env_words(locale: &str) -> String {
    language_env(locale)
        .iter()
        .map(|(name, value)| format!("{name}='{value}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `locale -a` lists `locale` (it writes `de_DE.utf8` for
/// `de_DE.UTF-8`).
fn generated(locale: &str) -> bool {
    let wanted = locale.to_lowercase().replace("utf-8", "utf8");
    Command::new("locale")
        .arg("-a")
        .output()
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.to_lowercase() == wanted)
        })
        .unwrap_or(false)
}
