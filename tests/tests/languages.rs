//! Translations: every catalogue in `po/` is complete and sound, and the
//! `elicit` CLI speaks the user's language, falling back to English where
//! there is no catalogue. (Each front-end's own language tests sit with
//! its other tests: `tui.rs`, `gtk.rs`, `notify.rs`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use elicit_tests::{Daemon, PrivateBus, binary, language_env, within};

fn po_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../po")
}

/// The languages in `po/LINGUAS`.
fn languages() -> Vec<String> {
    let text = std::fs::read_to_string(po_dir().join("LINGUAS")).expect("po/LINGUAS");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// One entry of a catalogue: the msgid (and plural) and its translations.
#[derive(Debug, Default)]
struct Entry {
    msgid: String,
    plural: String,
    msgstrs: Vec<String>,
    fuzzy: bool,
}

/// Reads the entries of a `.po`/`.pot` file, header left out. Enough of
/// the format for files that xgettext and msgmerge wrote.
fn entries(path: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut entry = Entry::default();
        // Which string a continuation line ("…") adds to.
        let mut target: Option<usize> = None;
        let mut strings: Vec<String> = vec![String::new(), String::new()];
        for line in block.lines() {
            if line.starts_with("#,") && line.contains("fuzzy") {
                entry.fuzzy = true;
            }
            let (slot, rest) = if let Some(rest) = line.strip_prefix("msgid_plural ") {
                (Some(1), rest)
            } else if let Some(rest) = line.strip_prefix("msgid ") {
                (Some(0), rest)
            } else if let Some(rest) = line.strip_prefix("msgstr[") {
                let (_, rest) = rest.split_once("] ").expect("msgstr[n] \"…\"");
                strings.push(String::new());
                (Some(strings.len() - 1), rest)
            } else if let Some(rest) = line.strip_prefix("msgstr ") {
                strings.push(String::new());
                (Some(strings.len() - 1), rest)
            } else if line.starts_with('"') {
                (target, line)
            } else {
                continue;
            };
            target = slot;
            if let Some(i) = slot {
                strings[i].push_str(&unquote(rest));
            }
        }
        if strings[0].is_empty() {
            continue; // the header, or a comment-only block
        }
        entry.msgid = strings[0].clone();
        entry.plural = strings[1].clone();
        entry.msgstrs = strings.split_off(2);
        out.push(entry);
    }
    out
}

fn unquote(quoted: &str) -> String {
    let inner = quoted.trim().trim_start_matches('"').trim_end_matches('"');
    inner
        .replace("\\n", "\n")
        .replace("\\\"", "\"")
        .replace("\\\\", "\\")
}

/// The `{name}` placeholders of a string.
fn placeholders(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(close) = rest.find('}') {
            let name = &rest[..close];
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                found.insert(name.to_owned());
            }
        }
    }
    found
}

#[test]
fn every_string_of_the_template_is_translated_in_every_catalogue() {
    let template = entries(&po_dir().join("elicitd.pot"));
    assert!(
        template.len() > 100,
        "the template has {} strings",
        template.len()
    );
    for lang in languages() {
        let po = po_dir().join(format!("{lang}.po"));
        // msgfmt's own count, as a translator or platform would see it.
        let output = Command::new("msgfmt")
            .args(["--check", "--statistics", "--output-file=/dev/null"])
            .arg(&po)
            .output()
            .expect("msgfmt runs (the gettext package; run tests/setup)");
        let stats = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        assert!(output.status.success(), "{lang}: {stats}");
        assert_eq!(
            stats,
            format!("{} translated messages.", template.len()),
            "po/{lang}.po is not complete (fuzzy or untranslated strings): run po/update-pot.sh and translate"
        );
        let catalogue = entries(&po);
        for wanted in &template {
            let entry = catalogue
                .iter()
                .find(|e| e.msgid == wanted.msgid && e.plural == wanted.plural)
                .unwrap_or_else(|| panic!("po/{lang}.po lacks {:?}", wanted.msgid));
            assert!(!entry.fuzzy, "po/{lang}.po: {:?} is fuzzy", entry.msgid);
            let expected = placeholders(&entry.msgid);
            for msgstr in &entry.msgstrs {
                assert!(
                    !msgstr.is_empty(),
                    "po/{lang}.po: {:?} is untranslated",
                    entry.msgid
                );
                // A placeholder lost or misspelt would show as "{server}".
                assert_eq!(
                    placeholders(msgstr),
                    expected,
                    "po/{lang}.po: {msgstr:?} does not keep the placeholders of {:?}",
                    entry.msgid
                );
            }
        }
    }
}

#[test]
fn the_window_buttons_keep_distinct_mnemonics_in_every_language() {
    let buttons = ["_Cancel", "_Decline", "_Accept", "_Open in browser", "C_lose"];
    for lang in languages() {
        let catalogue = entries(&po_dir().join(format!("{lang}.po")));
        let letters: BTreeSet<char> = buttons
            .iter()
            .map(|msgid| {
                let entry = catalogue.iter().find(|e| e.msgid == *msgid).expect("translated");
                let label = &entry.msgstrs[0];
                let at = label
                    .find('_')
                    .unwrap_or_else(|| panic!("{lang}: {label:?} has no mnemonic"));
                label[at + 1..]
                    .chars()
                    .next()
                    .expect("a letter")
                    .to_lowercase()
                    .next()
                    .expect("lower")
            })
            .collect();
        assert_eq!(
            letters.len(),
            buttons.len(),
            "{lang}: two buttons share a mnemonic: {letters:?}"
        );
    }
}

#[test]
fn the_template_is_up_to_date_with_the_sources() {
    let output = Command::new("sh")
        .arg(po_dir().join("update-pot.sh"))
        .arg("--check")
        .output()
        .expect("sh runs po/update-pot.sh");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `elicit ARGS` on `bus` in `locale`: standard output and error.
async fn elicit_in(locale: &str, bus: &PrivateBus, args: &[&str]) -> String {
    let mut command = tokio::process::Command::new(binary("elicit"));
    command.arg("--bus").arg(bus.address()).args(args);
    for (name, value) in language_env(locale) {
        command.env(name, value);
    }
    let output = within("elicit to finish", command.output())
        .await
        .expect("elicit runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_speaks_german_and_french_and_english_without_a_catalogue() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let german = elicit_in("de_DE.UTF-8", &bus, &["list"]).await;
    assert_eq!(german.trim(), "keine offenen Formulare");
    let status = elicit_in("de_DE.UTF-8", &bus, &["status"]).await;
    assert!(
        status.contains("Offene Formulare: 0") && status.contains("Oberflächen:"),
        "{status}"
    );
    let french = elicit_in("fr_FR.UTF-8", &bus, &["list"]).await;
    assert_eq!(french.trim(), "aucun formulaire en attente");
    // Hebrew has no catalogue: English, not the msgids' placeholders or
    // another language.
    let fallback = elicit_in("he_IL.UTF-8", &bus, &["list"]).await;
    assert_eq!(fallback.trim(), "no pending forms");
    let status = elicit_in("he_IL.UTF-8", &bus, &["status"]).await;
    assert!(status.contains("pending forms: 0"), "{status}");
}

/// The program `name` in a folder of its own, with no `share/locale`
/// beside it: the build's own catalogues are all it has. A hard link, not
/// a copy: a copy's write descriptor, inherited by a process that another
/// test starts meanwhile, would make it "text file busy".
fn lone_copy(dir: &Path, name: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin folder");
    let copy = bin.join(name);
    std::fs::hard_link(binary(name), &copy).expect("link the program");
    copy
}

/// `language_env(locale)` without the test catalogues: only what cargo
/// compiled may translate.
fn without_test_catalogues(locale: &str) -> Vec<(&'static str, String)> {
    language_env(locale)
        .into_iter()
        .map(|(name, value)| {
            if name == "ELICITD_LOCALEDIR" {
                (name, String::new())
            } else {
                (name, value)
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_build_speaks_german_with_no_catalogue_step() {
    // No po/build.sh, no ELICITD_LOCALEDIR, no share/locale: `cargo build`
    // compiled the catalogues (frontends/i18n/build.rs), and a program run
    // from the build finds them.
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    // Beside the build (a hard link stays on its file system), not in it.
    let build = binary("elicit");
    let dir = tempfile::tempdir_in(build.parent().expect("a folder")).expect("temp dir");
    let env = without_test_catalogues("de_DE.UTF-8");

    let elicit = lone_copy(dir.path(), "elicit");
    let output = within(
        "elicit list",
        tokio::process::Command::new(&elicit)
            .arg("--bus")
            .arg(bus.address())
            .arg("list")
            .envs(env.clone())
            .output(),
    )
    .await
    .expect("elicit runs");
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(said.trim(), "keine offenen Formulare", "{output:?}");

    // A front-end too: the terminal one, in line mode, says it registered.
    let tui = lone_copy(dir.path(), "elicit-tui");
    let mut child = tokio::process::Command::new(&tui)
        .arg("--bus")
        .arg(bus.address())
        .arg("--plain")
        .envs(env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("elicit-tui starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let line = within("elicit-tui to say it registered", async {
        loop {
            match lines.next_line().await {
                Ok(Some(line)) if line.contains("elicitd") => break line,
                Ok(Some(_)) => {}
                other => panic!("elicit-tui ended without registering: {other:?}"),
            }
        }
    })
    .await;
    assert_eq!(line, "elicit-tui: bei elicitd angemeldet; warte auf Formulare.");
}
