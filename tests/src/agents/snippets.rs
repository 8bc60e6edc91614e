//! The hosts' configuration as the documentation gives it: the test reads
//! the snippet a user copies, so that a snippet that stops working fails
//! a test.

use std::path::PathBuf;

use serde_json::Value;

/// The project's documentation: the README, then every `docs/*.md`.
fn documents() -> Vec<(PathBuf, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = vec![root.join("README.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        let mut docs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        docs.sort();
        paths.extend(docs);
    }
    paths
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|text| (p, text)))
        .collect()
}

/// The first fenced block of `language` after the first line that
/// contains `marker`, in the README or docs/.
pub fn block(marker: &str, language: &str) -> String {
    let fence = format!("```{language}");
    for (_, text) in documents() {
        let Some(at) = text.find(marker) else { continue };
        let rest = &text[at..];
        let Some(start) = rest.find(&fence) else { continue };
        let body = &rest[start + fence.len()..];
        if let Some(end) = body.find("```") {
            return body[..end].trim().to_owned();
        }
    }
    panic!("the documentation has no ```{language} block after {marker:?}")
}

/// The `everything` entry of the common `mcpServers` snippet (Claude Code's
/// `.mcp.json`, the Gemini CLI's `settings.json`, the SDK hosts).
pub fn everything_entry() -> Value {
    let text = block("The common `mcpServers` shape", "json");
    let parsed: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the mcpServers snippet is not JSON ({e}):\n{text}"));
    let entry = parsed["mcpServers"]["everything"].clone();
    assert!(
        entry["command"] == "elicit",
        "the snippet's everything entry runs elicit: {entry}"
    );
    entry
}

/// Codex's `[mcp_servers.everything]` snippet, as TOML text.
pub fn codex_toml() -> String {
    let text = block("OpenAI Codex (`~/.codex/config.toml`)", "toml");
    assert!(
        text.contains("[mcp_servers.everything]"),
        "the Codex snippet configures everything:\n{text}"
    );
    text
}
