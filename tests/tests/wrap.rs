//! `elicit hosts`, `elicit wrap` and `elicit unwrap` as a user runs them:
//! the real `elicit` on a temporary home holding every host's config
//! (tests/fixtures/hosts, from the hosts' documentation) and a project
//! folder as the current directory; and on configs written by the hosts'
//! own CLIs (`claude mcp add`, `codex mcp add`, `gemini mcp add`).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use elicit_tests::{DEADLINE, binary};
use serde_json::Value;

/// A user's home, a project folder, and elicitd's state folder.
struct Desk {
    dir: tempfile::TempDir,
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/hosts")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn files_under(dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, u32)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("entry");
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).expect("meta");
        if meta.is_dir() {
            files_under(&path, out);
        } else {
            let bytes = std::fs::read(&path).expect("read");
            out.insert(path, (bytes, meta.permissions().mode() & 0o7777));
        }
    }
}

impl Desk {
    fn new() -> Desk {
        let desk = Desk {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        std::fs::create_dir_all(desk.home()).expect("home");
        std::fs::create_dir_all(desk.project()).expect("project");
        desk
    }

    /// A desk with every fixture in place.
    fn with_fixtures() -> Desk {
        let desk = Desk::new();
        copy_tree(&fixtures().join("home"), &desk.home());
        copy_tree(&fixtures().join("project"), &desk.project());
        desk
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `elicit ARGS` as the user, in the project folder. `PATH` holds no
    /// `elicit`, so wrap writes the absolute path of the one under test.
    fn elicit(&self, args: &[&str]) -> Output {
        Command::new(binary("elicit"))
            .args(args)
            .current_dir(self.project())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_STATE_HOME", self.state())
            .env_remove("CODEX_HOME")
            .env_remove("COPILOT_HOME")
            .env_remove("CLINE_DIR")
            .env_remove("CLINE_DATA_DIR")
            .env_remove("CLINE_MCP_SETTINGS_PATH")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("run elicit")
    }

    /// Every file of the home and the project, with its mode.
    fn snapshot(&self) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
        let mut out = BTreeMap::new();
        files_under(&self.home(), &mut out);
        files_under(&self.project(), &mut out);
        out
    }

    /// `elicit hosts --json`.
    fn hosts(&self) -> Value {
        let output = self.elicit(&["hosts", "--json"]);
        assert!(output.status.success(), "{}", text(&output));
        serde_json::from_slice(&output.stdout).expect("hosts --json")
    }
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn ok(output: Output) -> Output {
    assert!(output.status.success(), "{}", text(&output));
    output
}

/// Every server `hosts` lists, as `(file, name, state)`.
fn states(hosts: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for file in hosts["files"].as_array().expect("files") {
        assert!(file["error"].is_null(), "{file}");
        for server in file["servers"].as_array().expect("servers") {
            out.push((
                file["path"].as_str().expect("path").to_owned(),
                server["name"].as_str().expect("name").to_owned(),
                server["verdict"]["state"].as_str().expect("state").to_owned(),
            ));
        }
    }
    out
}

/// Wrap, wrap again, unwrap: every file changed once, then not at all,
/// then given back byte for byte with its mode.
fn round_trip(desk: &Desk) {
    let before = desk.snapshot();
    assert!(!before.is_empty());
    ok(desk.elicit(&["wrap", "--all"]));
    let wrapped = desk.snapshot();
    for (path, (bytes, mode)) in &before {
        let (now, now_mode) = &wrapped[path];
        assert_ne!(now, bytes, "{} was not wrapped", path.display());
        assert_eq!(now_mode, mode, "{}: mode changed", path.display());
    }
    let listed = states(&desk.hosts());
    assert!(listed.iter().any(|(_, _, state)| state == "wrapped"));
    for (file, name, state) in &listed {
        assert_ne!(state, "wrap", "{file}: {name} left unwrapped");
    }

    ok(desk.elicit(&["wrap", "--all"]));
    assert!(desk.snapshot() == wrapped, "a second wrap changed a byte");

    ok(desk.elicit(&["unwrap", "--all"]));
    let after = desk.snapshot();
    for (path, original) in &before {
        assert!(
            after[path] == *original,
            "{} not given back byte for byte",
            path.display()
        );
    }
    // Nothing of ours is left behind: no temporary file, no backup.
    assert_eq!(after.len(), before.len());
    let backups: Vec<_> = std::fs::read_dir(desk.state().join("elicitd/wrap"))
        .expect("backup folder")
        .map(|e| e.expect("entry").file_name())
        .filter(|name| name != "lock")
        .collect();
    assert!(backups.is_empty(), "backups left: {backups:?}");
}

#[test]
fn every_fixture_is_wrapped_once_and_given_back_byte_for_byte() {
    let desk = Desk::with_fixtures();
    // Modes a user may have chosen stay theirs.
    for (file, mode) in [(".claude.json", 0o600), (".codex/config.toml", 0o640)] {
        std::fs::set_permissions(desk.home().join(file), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
    }
    round_trip(&desk);
}

#[test]
fn a_dry_run_shows_a_diff_and_writes_nothing() {
    let desk = Desk::with_fixtures();
    let before = desk.snapshot();
    let output = ok(desk.elicit(&["wrap", "--all", "--dry-run"]));
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(shown.contains("would wrap airtable"), "{shown}");
    assert!(shown.contains("-      \"command\": \"npx\","), "{shown}");
    assert!(desk.snapshot() == before);
    assert!(!desk.state().join("elicitd/wrap").exists());
}

#[test]
fn a_malformed_file_is_named_and_the_others_are_still_done() {
    let desk = Desk::with_fixtures();
    let broken = desk.home().join(".gemini/settings.json");
    std::fs::copy(fixtures().join("malformed/settings.json"), &broken).expect("copy");
    let broken_bytes = std::fs::read(&broken).expect("read");
    let claude = std::fs::read(desk.home().join(".claude.json")).expect("read");
    let output = desk.elicit(&["wrap", "--all"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        shown.contains(&format!("{}: cannot be read, left as it is:", broken.display())),
        "{shown}"
    );
    assert_eq!(std::fs::read(&broken).expect("read"), broken_bytes);
    assert_ne!(
        std::fs::read(desk.home().join(".claude.json")).expect("read"),
        claude
    );
}

#[test]
fn server_names_from_files_are_escaped_on_the_terminal() {
    let desk = Desk::new();
    std::fs::write(
        desk.home().join(".claude.json"),
        "{\"mcpServers\": {\"x\\u001b[2Jy\": {\"command\": \"a\\u0007\"}}}",
    )
    .expect("write");
    for args in [&["hosts"][..], &["wrap", "--all", "--dry-run"]] {
        let output = ok(desk.elicit(args));
        assert!(
            !output.stdout.contains(&0x1b) && !output.stdout.contains(&0x07),
            "{}",
            text(&output)
        );
        // Shown, escaped, so the reader sees what was there.
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("x\\u{1b}[2Jy"),
            "{}",
            text(&output)
        );
    }
}

/// What Claude Code does to `~/.claude.json` all the time: read it,
/// change a key, write it back whole (temporary file and rename), here
/// appending `n` to a `history` list so that a lost write shows as a gap.
/// With `lock`, under the lock Claude Code takes (`mkdir FILE.lock`, then
/// `rmdir`, as `proper-lockfile` does); without, as a host that takes none.
fn host_rewrite(path: &Path, n: usize, lock: bool) {
    let lock_dir = PathBuf::from(format!("{}.lock", path.display()));
    if lock {
        let started = Instant::now();
        while std::fs::create_dir(&lock_dir).is_err() {
            assert!(started.elapsed() < DEADLINE, "the host never got its lock");
            std::thread::yield_now();
        }
    }
    let mut value: Value = serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    value["history"]
        .as_array_mut()
        .expect("history")
        .push(Value::from(n));
    let temp = path.with_extension(format!("tmp.{n}"));
    std::fs::write(&temp, serde_json::to_string_pretty(&value).expect("json") + "\n").expect("write");
    std::fs::rename(&temp, path).expect("rename");
    if lock {
        std::fs::remove_dir(&lock_dir).expect("unlock");
    }
}

/// `elicit wrap HOST` while a writer rewrites `file` (see
/// [`host_rewrite`]) every `pace`. Returns wrap's output and the number
/// of the host's writes, all of which are checked to be in the file.
fn wrap_while_host_writes(
    desk: &Desk,
    host: &str,
    file: &Path,
    lock: bool,
    pace: Duration,
) -> (Output, usize) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(file).expect("read")).expect("json");
    value["history"] = Value::Array(Vec::new());
    std::fs::write(file, serde_json::to_string_pretty(&value).expect("json") + "\n").expect("write");
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, writes, file) = (stop.clone(), writes.clone(), file.to_owned());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                host_rewrite(&file, n, lock);
                writes.store(n, Ordering::SeqCst);
                // Pacing, not synchronisation: a host writes on its
                // events, and a file rewritten back to back with no lock
                // could never be edited by anyone.
                std::thread::sleep(pace);
            }
            n
        })
    };
    let started = Instant::now();
    while writes.load(Ordering::SeqCst) < 3 {
        assert!(started.elapsed() < DEADLINE, "the host's writer never wrote");
        std::thread::yield_now();
    }
    let during = desk.elicit(&["wrap", host]);
    let written_during = writes.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    let last = writer.join().expect("writer");
    eprintln!(
        "{host}: wrap while the host wrote ({written_during} writes by then, lock {lock}): {}",
        String::from_utf8_lossy(&during.stdout)
            .lines()
            .next()
            .unwrap_or("")
    );
    // Every write of the host is in the file: none was undone by wrap.
    let value: Value = serde_json::from_slice(&std::fs::read(file).expect("read")).expect("json");
    let history: Vec<u64> = value["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|v| v.as_u64().expect("number"))
        .collect();
    assert_eq!(
        history,
        (1..=last as u64).collect::<Vec<_>>(),
        "{}",
        text(&during)
    );
    (during, last)
}

/// Whether every server of `file` that wrap can wrap is wrapped.
fn all_wrapped(desk: &Desk, file: &Path) -> bool {
    let path = file.display().to_string();
    states(&desk.hosts())
        .iter()
        .filter(|(f, _, _)| *f == path)
        .all(|(_, _, state)| state != "wrap")
}

#[test]
fn claude_code_rewriting_its_file_under_its_lock_while_wrap_runs_loses_nothing() {
    let desk = Desk::with_fixtures();
    let path = desk.home().join(".claude.json");
    // Under the shared lock neither side can undo the other: wrap
    // succeeds, and the host's rewrites keep its edit.
    let (during, _) = wrap_while_host_writes(&desk, "claude", &path, true, Duration::from_millis(2));
    ok(during);
    assert!(all_wrapped(&desk, &path));
    assert!(!PathBuf::from(format!("{}.lock", path.display())).exists());
}

#[test]
fn a_host_rewriting_its_file_without_a_lock_loses_no_edit() {
    let desk = Desk::with_fixtures();
    let path = desk.home().join(".gemini/settings.json");
    let (during, last) = wrap_while_host_writes(&desk, "gemini", &path, false, Duration::from_millis(20));
    // Wrap writes only over the text it read: it succeeded, or said the
    // file kept changing and wrote nothing.
    let shown = String::from_utf8_lossy(&during.stdout);
    assert!(
        during.status.success() || shown.contains("kept changing"),
        "{}",
        text(&during)
    );
    // Each entry is whole: as it was, or wrapped.
    let value: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    for (name, server) in value["mcpServers"].as_object().expect("servers") {
        let args: Vec<&str> = server["args"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if server["command"].as_str().unwrap_or("").ends_with("/elicit") {
            let whole = matches!(args.get(..2), Some(["proxy", "--" | "--url"]));
            assert!(whole, "{name}: {args:?}");
        }
    }
    // With the host quiet, everything is wrapped and its edits stay.
    ok(desk.elicit(&["wrap", "gemini"]));
    assert!(all_wrapped(&desk, &path));
    let value: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    assert_eq!(value["history"].as_array().expect("history").len(), last);
}

/// A host's CLI from tests/peers/node, run as its users run it on the
/// desk's home; `None` (a failure under `CI`) when it is not installed.
fn host_cli(desk: &Desk, program: &str, args: &[&str]) -> Option<()> {
    let path = elicit_tests::node::node_path()?;
    let installed = elicit_tests::mcp::peers()
        .join("node/node_modules/.bin")
        .join(program);
    if !installed.exists() {
        return elicit_tests::mcp::missing(&format!("{program} (npm, tests/peers/node)"));
    }
    let output = Command::new(&installed)
        .args(args)
        .current_dir(desk.project())
        .env("PATH", path)
        .env("HOME", desk.home())
        .env("XDG_CONFIG_HOME", desk.home().join(".config"))
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("GEMINI_TELEMETRY_ENABLED", "false")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the host's CLI");
    assert!(output.status.success(), "{program} {args:?}: {}", text(&output));
    Some(())
}

const EVERYTHING: [&str; 3] = ["npx", "-y", "@modelcontextprotocol/server-everything"];

#[test]
fn configs_written_by_the_hosts_own_clis() {
    let desk = Desk::new();
    let everything = |head: &[&str]| -> Vec<String> {
        head.iter()
            .chain(EVERYTHING.iter())
            .map(|s| (*s).to_owned())
            .collect()
    };
    let written = (|| {
        let user = everything(&["mcp", "add", "-s", "user", "everything", "--"]);
        host_cli(
            &desk,
            "claude",
            &user.iter().map(String::as_str).collect::<Vec<_>>(),
        )?;
        // The default scope: local, this project's entry in ~/.claude.json.
        host_cli(
            &desk,
            "claude",
            &[
                "mcp",
                "add",
                "local-one",
                "-e",
                "KEY=value",
                "--",
                "node",
                "server.js",
                "--flag",
            ],
        )?;
        host_cli(
            &desk,
            "claude",
            &[
                "mcp",
                "add",
                "--transport",
                "http",
                "remote",
                "https://example.com/mcp",
            ],
        )?;
        let codex = everything(&["mcp", "add", "everything", "--env", "K=V", "--"]);
        host_cli(
            &desk,
            "codex",
            &codex.iter().map(String::as_str).collect::<Vec<_>>(),
        )?;
        let gemini = everything(&["mcp", "add", "-s", "user", "everything"]);
        host_cli(
            &desk,
            "gemini",
            &gemini.iter().map(String::as_str).collect::<Vec<_>>(),
        )?;
        // Gemini's default scope: the project's .gemini/settings.json.
        host_cli(
            &desk,
            "gemini",
            &["mcp", "add", "project-one", "node", "server.js"],
        )
    })();
    if written.is_none() {
        return;
    }
    for file in [".claude.json", ".codex/config.toml", ".gemini/settings.json"] {
        assert!(desk.home().join(file).is_file(), "{file} not written by its host");
    }
    assert!(desk.project().join(".gemini/settings.json").is_file());
    let hosts = desk.hosts();
    let listed = states(&hosts);
    for wanted in ["everything", "local-one", "remote", "project-one"] {
        assert!(
            listed
                .iter()
                .any(|(_, name, state)| name == wanted && state == "wrap"),
            "{wanted}: {hosts}"
        );
    }
    // Only the config files, not the hosts' other state, are compared.
    round_trip_files(
        &desk,
        &[
            desk.home().join(".claude.json"),
            desk.home().join(".codex/config.toml"),
            desk.home().join(".gemini/settings.json"),
            desk.project().join(".gemini/settings.json"),
        ],
    );
}

/// [`round_trip`] on some files only.
fn round_trip_files(desk: &Desk, files: &[PathBuf]) {
    let read = || -> Vec<Vec<u8>> { files.iter().map(|f| std::fs::read(f).expect("read")).collect() };
    let before = read();
    ok(desk.elicit(&["wrap", "--all"]));
    let wrapped = read();
    for (index, file) in files.iter().enumerate() {
        assert_ne!(wrapped[index], before[index], "{} not wrapped", file.display());
    }
    ok(desk.elicit(&["wrap", "--all"]));
    assert!(read() == wrapped, "a second wrap changed a byte");
    ok(desk.elicit(&["unwrap", "--all"]));
    for (index, file) in files.iter().enumerate() {
        assert!(
            read()[index] == before[index],
            "{} not given back byte for byte",
            file.display()
        );
    }
}
