//! Every format, on the fixtures of `tests/fixtures/hosts` (the hosts'
//! documented examples): wrap, wrap again (no byte changes), unwrap (byte
//! for byte), a dry run (nothing written), the host's own edit between
//! wrap and unwrap (only the entries come back), and a malformed file
//! (named, left byte-identical). The cases are in one file per format.

/// The checks every format's fixtures go through, as tests of the module
/// that calls it with its cases and its host edit.
macro_rules! every_fixture_checks {
    ($cases:expr, $host_edit:expr) => {
        #[test]
        fn every_fixture_round_trips() {
            for case in $cases {
                round_trip(case);
            }
        }

        #[test]
        fn wrapping_and_unwrapping_server_by_server_still_gives_back_every_byte() {
            for case in $cases {
                server_by_server(case);
            }
        }

        #[test]
        fn a_dry_run_writes_nothing() {
            for case in $cases {
                dry_run(case);
            }
        }

        #[test]
        fn only_the_entries_come_back_when_the_host_edited_the_file() {
            for case in $cases {
                host_edits_between(case, $host_edit);
            }
        }
    };
}

mod json;
mod toml;
mod yaml;

use std::path::{Path, PathBuf};

use crate::{Action, FileReport, Host, HostFile, Options, Scope, Store, Verdict, survey, unwrap, wrap};

/// One fixture and what `wrap` must make of it.
pub struct Case {
    pub host: Host,
    /// Under `tests/fixtures/hosts`.
    pub fixture: &'static str,
    pub scope: Scope,
    /// `(section's first key or project dir, server)` wrapped by `wrap`.
    pub wrapped: &'static [&'static str],
    /// Servers left alone.
    pub left: &'static [&'static str],
}

pub fn fixture(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/hosts")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A host file in a temporary folder, and a backup store beside it.
pub struct Bench {
    _dir: tempfile::TempDir,
    pub store: Store,
    pub file: HostFile,
}

impl Bench {
    pub fn new(host: Host, scope: Scope, name: &str, text: &str) -> Bench {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write fixture");
        Bench {
            store: Store::new(dir.path().join("state/wrap")),
            file: HostFile { host, path, scope },
            _dir: dir,
        }
    }

    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.file.path).expect("read")
    }

    pub fn set(&self, text: &str) {
        std::fs::write(&self.file.path, text).expect("write")
    }

    pub fn wrap(&self) -> FileReport {
        wrap(&self.store, &self.file, &options())
    }

    pub fn unwrap(&self) -> FileReport {
        unwrap(&self.store, &self.file, &options())
    }
}

pub fn options() -> Options {
    Options {
        program: "elicit".to_owned(),
        ..Options::default()
    }
}

fn bench(case: &Case) -> (Bench, String) {
    let text = fixture(case.fixture);
    let name = Path::new(case.fixture)
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    (Bench::new(case.host, case.scope.clone(), &name, &text), text)
}

fn names(report: &FileReport, action: Action) -> Vec<String> {
    let mut names: Vec<String> = report
        .servers
        .iter()
        .filter(|s| s.action == action)
        .map(|s| s.name.clone())
        .collect();
    names.sort();
    names
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
    names.sort();
    names
}

/// Every comment of `before` (whole lines, and the tails after ` # ` or
/// ` // `) is still in `after`.
fn comments_kept(before: &str, after: &str) {
    for line in before.lines() {
        let trimmed = line.trim_start();
        let comment = if trimmed.starts_with("//") || trimmed.starts_with('#') || trimmed.starts_with("/*") {
            Some(line)
        } else {
            line.find(" # ")
                .or_else(|| line.find(" // "))
                .map(|at| &line[at..])
        };
        if let Some(comment) = comment {
            assert!(after.contains(comment), "comment lost: {comment:?}\n{after}");
        }
    }
}

/// Wrap, wrap again, unwrap, on one fixture.
pub fn round_trip(case: &Case) {
    let (bench, original) = bench(case);
    let report = bench.wrap();
    assert_eq!(report.error, None, "{}", case.fixture);
    assert_eq!(
        names(&report, Action::Wrapped),
        sorted(case.wrapped),
        "{}",
        case.fixture
    );
    let wrapped = bench.text();
    assert_ne!(wrapped, original);
    comments_kept(&original, &wrapped);
    let seen = survey(&bench.file);
    for server in &seen.servers {
        let should = case.wrapped.contains(&server.name.as_str());
        assert_eq!(
            server.verdict == Verdict::Wrapped,
            should,
            "{}: {}",
            case.fixture,
            server.name
        );
        if case.left.contains(&server.name.as_str()) {
            assert!(
                matches!(server.verdict, Verdict::Leave { .. }),
                "{}: {}",
                case.fixture,
                server.name
            );
        }
    }
    for server in seen
        .servers
        .iter()
        .filter(|s| case.wrapped.contains(&s.name.as_str()))
    {
        assert_eq!(server.command[0], "elicit");
        assert_eq!(server.command[1], "proxy");
    }

    let again = bench.wrap();
    assert_eq!(again.error, None);
    assert!(
        !again.changed,
        "{}: a second wrap changed something",
        case.fixture
    );
    assert_eq!(
        bench.text(),
        wrapped,
        "{}: a second wrap changed a byte",
        case.fixture
    );

    let report = bench.unwrap();
    assert_eq!(report.error, None);
    assert_eq!(names(&report, Action::Unwrapped), sorted(case.wrapped));
    assert_eq!(
        bench.text(),
        original,
        "{}: unwrap is not byte-exact",
        case.fixture
    );
    assert_eq!(
        bench.store.load(&bench.file.path).expect("load"),
        None,
        "backup kept"
    );
}

/// One server wrapped, then the rest; one unwrapped, then the rest: the
/// file still comes back byte for byte, and no backup is left.
pub fn server_by_server(case: &Case) {
    let (bench, original) = bench(case);
    let mut one = options();
    one.servers = vec![case.wrapped[0].to_owned()];
    assert_eq!(wrap(&bench.store, &bench.file, &one).error, None);
    assert_eq!(bench.wrap().error, None);
    assert_eq!(unwrap(&bench.store, &bench.file, &one).error, None);
    if case.wrapped.len() > 1 {
        assert_ne!(
            bench.text(),
            original,
            "{}: only one was to be unwrapped",
            case.fixture
        );
    }
    assert_eq!(bench.unwrap().error, None);
    assert_eq!(bench.text(), original, "{}", case.fixture);
    assert_eq!(bench.store.load(&bench.file.path).expect("load"), None);
}

/// A dry run reports what it would do and writes nothing.
pub fn dry_run(case: &Case) {
    let (bench, original) = bench(case);
    let mut options = options();
    options.dry_run = true;
    let report = wrap(&bench.store, &bench.file, &options);
    assert_eq!(names(&report, Action::Wrapped), sorted(case.wrapped));
    let (before, after) = report.preview.expect("a preview");
    assert_eq!(before, original);
    assert_ne!(after, original);
    assert_eq!(bench.text(), original);
    assert_eq!(bench.store.load(&bench.file.path).expect("load"), None);
}

/// The host edits the file between wrap and unwrap (`edit` is its
/// change, made outside the servers): unwrap gives back the entries, and
/// the host's edit stays.
pub fn host_edits_between(case: &Case, edit: fn(&str) -> String) {
    let (bench, original) = bench(case);
    assert_eq!(bench.wrap().error, None);
    let wrapped = bench.text();
    bench.set(&edit(&wrapped));
    let report = bench.unwrap();
    assert_eq!(report.error, None);
    assert_eq!(names(&report, Action::Unwrapped), sorted(case.wrapped));
    assert_eq!(
        bench.text(),
        edit(&original),
        "{}: entries not restored exactly",
        case.fixture
    );
}

/// A file that cannot be parsed is named with the reason and left as it
/// is, byte for byte.
pub fn malformed(host: Host, fixture_name: &str) {
    let text = fixture(fixture_name);
    let name = Path::new(fixture_name)
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let bench = Bench::new(host, Scope::User, &name, &text);
    let report = bench.wrap();
    let error = report.error.expect("an error");
    assert!(error.contains("cannot be read"), "{error}");
    assert_eq!(bench.text(), text);
    assert!(bench.unwrap().error.is_some());
    assert_eq!(bench.text(), text);
}

/// The path of a fixture, for tests that need a file name.
pub fn fixture_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/hosts")
        .join(relative)
}
