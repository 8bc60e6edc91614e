//! MCP authorization tokens kept in a real Secret Service: GNOME Keyring
//! (`gnome-keyring-daemon`, Debian package gnome-keyring) on a private bus,
//! inspected with `secret-tool` (libsecret-tools).
//!
//! The keyring is started as a desktop session's PAM module would start it:
//! `gnome-keyring-daemon --unlock` reads a password on its standard input
//! and creates (or unlocks) the `login` collection with it, which becomes
//! the `default` alias. Its home, data and runtime directories are the
//! test's own, and it owns `org.freedesktop.secrets` on the test's bus
//! (`DBUS_SESSION_BUS_ADDRESS`), the bus the proxy's `oo7` client reaches
//! as the session bus.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use elicit_tests::http::client_scenario;
use elicit_tests::mcp::Host;
use elicit_tests::{Daemon, PrivateBus, eventually, which, within};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// `gnome-keyring-daemon` and `secret-tool`, or a loud skip (a failure
/// under `CI`).
fn tools() -> bool {
    let missing: Vec<&str> = ["gnome-keyring-daemon", "secret-tool"]
        .into_iter()
        .filter(|tool| which(tool).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let what = format!(
        "{} missing: install the Debian packages gnome-keyring and libsecret-tools (tests/setup)",
        missing.join(" and ")
    );
    assert!(std::env::var_os("CI").is_none(), "{what}");
    eprintln!("\n!!! SKIPPED: {what} !!!\n");
    false
}

/// A GNOME Keyring with an unlocked `login` collection, serving the Secret
/// Service on a private bus; killed on drop.
struct Keyring {
    _child: Child,
    /// Its HOME, XDG_DATA_HOME (`data/keyrings/login.keyring`) and
    /// XDG_RUNTIME_DIR.
    dir: TempDir,
}

const PASSWORD: &str = "elicit-test-login-password";

impl Keyring {
    async fn start(bus: &PrivateBus) -> Keyring {
        let dir = tempfile::Builder::new()
            .prefix("elicit-keyring")
            .tempdir()
            .expect("temp dir");
        for sub in ["home", "data", "config", "runtime"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path().join("runtime"), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        let mut child = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--foreground", "--components=secrets"])
            // Nothing of the user's session: not its keyring, bus or display.
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir.path().join("home"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_RUNTIME_DIR", dir.path().join("runtime"))
            .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("gnome-keyring-daemon starts");
        // The password, then end of file: that is how --unlock reads it.
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(PASSWORD.as_bytes())
            .await
            .expect("write the password");
        drop(stdin);
        // Ready when the default collection is there and unlocked: owning
        // the name alone comes before the login collection is made.
        let conn = bus.connect().await;
        let mut exited = None;
        eventually(
            "gnome-keyring's default collection, unlocked, on the private bus",
            || {
                if let Ok(Some(status)) = child.try_wait() {
                    exited = Some(status);
                }
                let conn = conn.clone();
                let gone = exited.is_some();
                async move { gone || default_unlocked(&conn).await }
            },
        )
        .await;
        if let Some(status) = exited {
            panic!("gnome-keyring-daemon exited before it served the Secret Service: {status}");
        }
        Keyring { _child: child, dir }
    }

    /// The keyring files.
    fn keyrings(&self) -> PathBuf {
        self.dir.path().join("data/keyrings")
    }
}

/// True when `org.freedesktop.secrets` answers and its `default` alias
/// names a collection that is not locked.
async fn default_unlocked(conn: &zbus::Connection) -> bool {
    let Ok(reply) = conn
        .call_method(
            Some("org.freedesktop.secrets"),
            "/org/freedesktop/secrets",
            Some("org.freedesktop.Secret.Service"),
            "ReadAlias",
            &("default",),
        )
        .await
    else {
        return false;
    };
    let Ok(path) = reply.body().deserialize::<zbus::zvariant::OwnedObjectPath>() else {
        return false;
    };
    if path.as_str() == "/" {
        return false;
    }
    let Ok(reply) = conn
        .call_method(
            Some("org.freedesktop.secrets"),
            path.as_str(),
            Some("org.freedesktop.DBus.Properties"),
            "Get",
            &("org.freedesktop.Secret.Collection", "Locked"),
        )
        .await
    else {
        return false;
    };
    reply
        .body()
        .deserialize::<zbus::zvariant::OwnedValue>()
        .ok()
        .and_then(|v| bool::try_from(v).ok())
        == Some(false)
}

/// One item as `secret-tool search --all` prints it.
#[derive(Debug, Default)]
struct Item {
    label: String,
    secret: String,
    attributes: Vec<(String, String)>,
}

impl Item {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The items of `application=elicit` in the keyring, read by libsecret's
/// `secret-tool` over the private bus (unlocking nothing: the collection
/// is unlocked already).
async fn elicit_items(bus: &PrivateBus) -> Vec<Item> {
    let output = Command::new("secret-tool")
        .args(["search", "--all", "--unlock", "application", "elicit"])
        .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("secret-tool runs");
    // Each item: `[PATH]`, `label = …`, `secret = …`, `created`, `modified`
    // on standard output, its `attribute.NAME = VALUE` lines on standard
    // error, in the same order; no item: exit status 1 and nothing.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut items: Vec<Item> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with('[') {
            items.push(Item::default());
        } else if let (Some(item), Some(label)) = (items.last_mut(), line.strip_prefix("label = ")) {
            item.label = label.to_owned();
        } else if let (Some(item), Some(secret)) = (items.last_mut(), line.strip_prefix("secret = ")) {
            item.secret = secret.to_owned();
        }
    }
    let mut attributes: Vec<(String, String)> = Vec::new();
    let mut groups: Vec<Vec<(String, String)>> = Vec::new();
    for line in stderr.lines() {
        let Some((name, value)) = line.strip_prefix("attribute.").and_then(|l| l.split_once(" = ")) else {
            continue;
        };
        if attributes.iter().any(|(n, _)| n == name) {
            groups.push(std::mem::take(&mut attributes));
        }
        attributes.push((name.to_owned(), value.to_owned()));
    }
    if !attributes.is_empty() {
        groups.push(attributes);
    }
    if items.len() == 1 {
        items[0].attributes = groups.concat();
    } else {
        assert_eq!(
            items.len(),
            groups.len(),
            "secret-tool's items and attribute lists do not pair up:\n{stdout}\n{stderr}"
        );
        for (item, group) in items.iter_mut().zip(groups) {
            item.attributes = group;
        }
    }
    items
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// `elicit proxy --url … --token-store secret-service` signs in to the
/// conformance suite's server (auth/metadata-default) and keeps the tokens
/// in GNOME Keyring: one item with the attributes the store writes, the
/// whole record as its secret, no token file, and the access token in no
/// line the proxy printed nor in the keyring's file on disk (encrypted);
/// then a second proxy sends the kept token from the keyring at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_service_keeps_the_tokens() {
    if !tools() {
        return;
    }
    let bus = PrivateBus::start();
    let keyring = Keyring::start(&bus).await;
    let _daemon = Daemon::start(&bus, "").await;
    assert!(
        elicit_items(&bus).await.is_empty(),
        "a new keyring holds no elicit item"
    );

    // The host makes the run's XDG_STATE_HOME with mkdtemp: under this
    // TMPDIR, where the test looks for token files afterwards.
    let scratch = tempfile::Builder::new()
        .prefix("elicit-tokens-test")
        .tempdir()
        .expect("temp dir");
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    let stderr = scratch.path().join("proxy.stderr");
    let flags = serde_json::json!(["--token-store", "secret-service"]).to_string();
    let scenario = "auth/metadata-default";
    let Some(run) = client_scenario(
        &bus,
        scenario,
        &[
            ("DBUS_SESSION_BUS_ADDRESS", bus.address()),
            ("PROXY_FLAGS", &flags),
            ("PROXY_STDERR", &stderr.display().to_string()),
            ("TMPDIR", &tmp.display().to_string()),
        ],
    )
    .await
    else {
        return;
    };
    let printed = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert!(
        run.passed() && run.text.contains(" 0 failed"),
        "{scenario} did not pass with --token-store secret-service ({:?}):\n{}\n--- the proxy's stderr:\n{printed}",
        run.counts,
        run.text
    );

    // One item, with the store's attributes and label.
    let items = elicit_items(&bus).await;
    assert_eq!(
        items.len(),
        1,
        "one elicit item in the keyring after one sign-in: {items:?}\n--- the proxy's stderr:\n{printed}"
    );
    let item = &items[0];
    eprintln!("kept in the keyring: {:?} {:?}", item.label, item.attributes);
    let resource = item
        .attribute("elicit-resource")
        .expect("elicit-resource attribute");
    assert!(
        resource.starts_with("http://localhost:") || resource.starts_with("http://127.0.0.1:"),
        "the resource is the conformance server's URL: {item:?}"
    );
    let client = item.attribute("elicit-client").expect("elicit-client attribute");
    assert!(!client.is_empty(), "the client identity is named: {item:?}");
    assert_eq!(item.label, format!("elicit: MCP authorization for {resource}"));

    // The secret is the whole record, for that resource.
    let record: serde_json::Value = serde_json::from_str(&item.secret)
        .unwrap_or_else(|e| panic!("the item's secret is the JSON token record ({e}): {item:?}"));
    let token = record["access_token"].as_str().expect("an access token");
    assert!(!token.is_empty(), "the access token is kept");
    assert_eq!(
        record["resource"].as_str(),
        Some(resource),
        "the record names its resource"
    );

    // No file took the tokens: the host's state directories hold none.
    let states: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .expect("read TMPDIR")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("elicit-conformance-state-"))
        })
        .collect();
    assert_eq!(
        states.len(),
        1,
        "the host made one XDG_STATE_HOME for the proxy under TMPDIR"
    );
    let files = files_under(&states[0]);
    assert!(
        files.iter().all(|f| !f.to_string_lossy().contains("tokens")),
        "no token file under the run's XDG_STATE_HOME: {files:?}"
    );
    assert!(
        !printed.contains("no Secret Service"),
        "the proxy fell back to a file:\n{printed}"
    );

    // The access token never reached the proxy's stderr, the suite's
    // output, nor the keyring's file in the clear.
    assert!(!printed.contains(token), "the proxy printed the access token");
    assert!(
        !run.text.contains(token),
        "the access token reached the suite's output"
    );
    let login = keyring.keyrings().join("login.keyring");
    let on_disk = std::fs::read(&login).unwrap_or_else(|e| panic!("{}: {e}", login.display()));
    assert!(
        !on_disk.windows(token.len()).any(|w| w == token.as_bytes()),
        "the keyring file holds the token in the clear"
    );

    // Reuse: the record, moved to a server of the test's own that takes
    // that token alone, is sent from the keyring on the first request;
    // no 401, no consent. (The conformance server is gone, and its port
    // is new each run: the record's resource is changed to this one's,
    // and it is made to never expire so that no refresh is tried.)
    let (server, url, said) = bearer_server(&[token]).await;
    let mut moved = record.clone();
    moved["resource"] = url.clone().into();
    moved["expires_at"] = serde_json::Value::Null;
    moved["refresh_token"] = serde_json::Value::Null;
    store_item(&bus, &url, client, &moved.to_string()).await;
    let mut cmd = Command::new(elicit_tests::binary("elicit"));
    cmd.args([
        "--bus",
        bus.address(),
        "proxy",
        "--url",
        &url,
        "--token-store",
        "secret-service",
    ])
    .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
    .env("XDG_STATE_HOME", scratch.path().join("state"));
    let mut host = Host::spawn(cmd);
    let init = host.initialize(serde_json::json!({})).await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "bearer-server",
        "the kept token opened the server: {init}"
    );
    let listed = host.call(1, "tools/list", serde_json::json!({})).await;
    assert!(listed["result"]["tools"].is_array(), "tools/list: {listed}");
    drop(host);
    let requests = heard(server, said).await;
    assert!(
        !requests.is_empty() && requests.iter().all(|r| r.ends_with(" ok")),
        "every request bore the kept token: {requests:?}"
    );
    let conn = bus.connect().await;
    let asked = elicit_tests::history(&conn).await;
    assert_eq!(
        asked.len(),
        1,
        "no consent beyond the first run's sign-in: {asked:?}"
    );
    assert!(
        !scratch.path().join("state").exists(),
        "the second run wrote no state either"
    );
}

/// tests/peers/python/bearer_server.py with `args` (the token it takes,
/// then for a refresh the refresh token and the new tokens): the process,
/// its URL, and the rest of its output (a line per request).
async fn bearer_server(args: &[&str]) -> (Child, String, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new("python3")
        .arg(elicit_tests::mcp::peers().join("python/bearer_server.py"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = within("bearer_server.py to listen", lines.next_line())
        .await
        .expect("read")
        .expect("bearer_server.py ended before it listened");
    let url = line.strip_prefix("listening on ").expect("its URL").to_owned();
    (child, url, lines)
}

/// Stops the bearer server: every line it printed after listening.
async fn heard(mut server: Child, mut said: Lines<BufReader<ChildStdout>>) -> Vec<String> {
    server.kill().await.expect("kill the server");
    let mut requests = Vec::new();
    while let Ok(Some(line)) = said.next_line().await {
        requests.push(line);
    }
    eprintln!("the server saw: {requests:?}");
    requests
}

/// Stores `secret` in the default collection with the attributes the
/// proxy's store uses, through libsecret's `secret-tool store`.
async fn store_item(bus: &PrivateBus, resource: &str, client: &str, secret: &str) {
    let mut child = Command::new("secret-tool")
        .args([
            "store",
            "--label",
            &format!("elicit: MCP authorization for {resource}"),
            "application",
            "elicit",
            "elicit-resource",
            resource,
            "elicit-client",
            client,
        ])
        .env("DBUS_SESSION_BUS_ADDRESS", bus.address())
        .stdin(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("secret-tool runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(secret.as_bytes())
        .await
        .expect("write the secret");
    drop(stdin);
    let status = within("secret-tool store", child.wait()).await.expect("wait");
    assert!(status.success(), "secret-tool store: {status}");
}

/// The token file `--token-store file --token-dir DIR` keeps for
/// `resource` with a dynamically registered client: its name is the
/// SHA-256 of the resource, a NUL and the client identity, in hex.
fn token_file(dir: &Path, resource: &str) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(resource.as_bytes());
    hash.update([0]);
    hash.update(b"dynamic");
    let name: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{name}.json"))
}

/// Seconds since the epoch.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// `elicit proxy --url … --token-store file` with a kept record whose
/// access token expired a minute ago refreshes it before its first
/// request: one refresh at the record's token endpoint, then every
/// request with the new token, no consent asked (the bus leads nowhere,
/// so that asking would fail), the new token and expiry kept in the file
/// (still 0600), and no token in the proxy's trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_store_refreshes_before_expiry() {
    // Distinct per run, so that a match in the trace is this run's.
    let run = format!("{}-{}", std::process::id(), now());
    let old = format!("old-access-{run}");
    let refresh = format!("old-refresh-{run}");
    let new = format!("new-access-{run}");
    let new_refresh = format!("new-refresh-{run}");
    let (server, url, said) = bearer_server(&[&old, &refresh, &new, &new_refresh]).await;
    let token_endpoint = url.replace("/mcp", "/token");

    let scratch = tempfile::Builder::new()
        .prefix("elicit-refresh-test")
        .tempdir()
        .expect("temp dir");
    let dir = scratch.path().join("tokens");
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .expect("mkdir");
    let expired = now() - 60;
    let record = serde_json::json!({
        "client": {"id": "elicit-refresh-test", "secret": null, "method": "none"},
        "access_token": old,
        "refresh_token": refresh,
        "expires_at": expired,
        "scopes": [],
        "token_endpoint": token_endpoint,
        "resource": url,
        "redirect_port": null,
    });
    let file = token_file(&dir, &url);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, record.to_string().as_bytes()))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));

    let stderr_path = scratch.path().join("proxy.stderr");
    let stderr = std::fs::File::create(&stderr_path).expect("create the stderr file");
    let mut cmd = Command::new(elicit_tests::binary("elicit"));
    cmd.args([
        "--bus",
        "unix:path=/nonexistent/elicit-refresh-test",
        "proxy",
        "--url",
        &url,
    ])
    .args(["--token-store", "file", "--token-dir"])
    .arg(&dir)
    .env("ELICIT_LOG", "trace")
    .env("XDG_STATE_HOME", scratch.path().join("state"))
    .env_remove("DBUS_SESSION_BUS_ADDRESS");
    let mut host = Host::spawn_with_stderr(cmd, stderr);
    let init = host.initialize(serde_json::json!({})).await;
    let listed = host.call(1, "tools/list", serde_json::json!({})).await;
    host.close_stdin();
    let code = host.exit_code().await;
    let printed = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let requests = heard(server, said).await;
    let tail: String = {
        let lines: Vec<&str> = printed.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    assert_eq!(
        init["result"]["serverInfo"]["name"], "bearer-server",
        "initialize went through with the refreshed token: {init}\n--- the server saw: {requests:?}\n--- the proxy's stderr ends:\n{tail}"
    );
    assert!(listed["result"]["tools"].is_array(), "tools/list: {listed}");
    assert_eq!(code, Some(0), "the proxy ends cleanly when the host goes");

    // One refresh, first; then only the new token, each request taken.
    let refreshes: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.starts_with("POST /token"))
        .map(|(i, _)| i)
        .collect();
    let mcp: Vec<(usize, &String)> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.contains(" /mcp "))
        .collect();
    assert_eq!(
        refreshes.len(),
        1,
        "exactly one call at the token endpoint: {requests:?}"
    );
    assert_eq!(
        requests[refreshes[0]], "POST /token refresh ok",
        "the refresh was granted: {requests:?}"
    );
    assert!(
        !mcp.is_empty() && mcp[0].0 > refreshes[0],
        "the refresh came before the first /mcp request: {requests:?}"
    );
    assert!(
        mcp.iter().all(|(_, r)| r.ends_with(" new ok")),
        "every /mcp request bore the new token and was taken: {requests:?}"
    );
    assert!(
        mcp.iter().any(|(_, r)| r.starts_with("POST /mcp ")),
        "the requests reached /mcp: {requests:?}"
    );
    assert!(
        requests.iter().all(|r| !r.starts_with("GET /.well-known/")),
        "no discovery, as for a new sign-in: {requests:?}"
    );

    // The file holds the new tokens and expiry, readable by the user alone.
    let kept: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())),
    )
    .expect("the kept record is JSON");
    assert_eq!(
        kept["access_token"].as_str(),
        Some(new.as_str()),
        "the new access token is kept"
    );
    assert_eq!(
        kept["refresh_token"].as_str(),
        Some(new_refresh.as_str()),
        "the new refresh token is kept"
    );
    let expires_at = kept["expires_at"].as_u64().expect("an expiry");
    assert!(
        expires_at >= now() + 3000 && expires_at <= now() + 3600,
        "the new expiry is an hour from the refresh: {expires_at} (now {})",
        now()
    );
    assert_eq!(kept["resource"], record["resource"], "the same resource");
    assert_eq!(kept["client"], record["client"], "the same client");
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is the user's alone");
    assert_eq!(
        std::fs::read_dir(&dir).expect("read the token dir").count(),
        1,
        "the record was replaced, no other file left"
    );
    assert!(
        !scratch.path().join("state").exists(),
        "nothing went under XDG_STATE_HOME"
    );

    // Traced at every level, and still no token.
    assert!(
        printed.lines().count() > 5,
        "ELICIT_LOG=trace traced something:\n{printed}"
    );
    for (what, secret) in [
        ("old access token", &old),
        ("old refresh token", &refresh),
        ("new access token", &new),
        ("new refresh token", &new_refresh),
    ] {
        assert!(!printed.contains(secret.as_str()), "the proxy printed the {what}");
    }
}
