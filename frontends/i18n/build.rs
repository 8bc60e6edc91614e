//! Compiles the catalogues of `po/` (the languages of `po/LINGUAS`) into
//! `OUT_DIR/locale/LANG/LC_MESSAGES/elicitd.mo`, so that a program built
//! from source finds its translations with no step of its own (see
//! `locale_dir`). The packages still compile theirs with msgfmt
//! (`po/build.sh`), which also checks the format strings.

use std::path::{Path, PathBuf};

use polib::message::{CatalogMessageMutView, MessageView};
use polib::po_file::POParseOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let po = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../po");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo sets OUT_DIR")?).join("locale");
    let linguas = po.join("LINGUAS");
    println!("cargo::rerun-if-changed={}", linguas.display());
    let languages = std::fs::read_to_string(&linguas).map_err(|e| format!("{}: {e}", linguas.display()))?;
    for lang in languages
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let source = po.join(format!("{lang}.po"));
        println!("cargo::rerun-if-changed={}", source.display());
        let dir = out.join(lang).join("LC_MESSAGES");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        compile(&source, &dir.join("elicitd.mo")).map_err(|e| format!("{}: {e}", source.display()))?;
    }
    Ok(())
}

/// `source` (a .po file) as the .mo file `target`, leaving out what msgfmt
/// leaves out: untranslated and fuzzy entries.
fn compile(source: &Path, target: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut options = POParseOptions::new();
    options.translated_only = true;
    let mut catalog = polib::po_file::parse_with_option(source, &options)?;
    for mut message in catalog.messages_mut() {
        if message.is_fuzzy() {
            message.delete();
        }
    }
    polib::mo_file::write(&catalog, target)?;
    Ok(())
}
