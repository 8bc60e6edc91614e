//! Goose's and Continue's `config.yaml`. `yaml-edit` (lossless, on
//! `rowan`) reads the file and says where each node is; the edit itself
//! is a few lines written by hand at those places, so that comments,
//! quoting and indentation elsewhere never pass through a serialiser.

use std::ops::Range;

use yaml_edit::{Mapping, YamlFile, YamlNode};

use super::splice::{Splices, indentation, line_break, quote, separator};
use super::{Change, Found, stdio_head};
use crate::entry::{Entry, inner_command};
use crate::host::{Host, HostFile, Section, top_section};

fn parse(text: &str) -> Result<Option<Mapping>, String> {
    let parsed = YamlFile::parse(text);
    if let Some(error) = parsed.errors().first() {
        return Err(error.clone());
    }
    let Some(document) = parsed.tree().document() else {
        return Ok(None);
    };
    match document.as_mapping() {
        Some(mapping) => Ok(Some(mapping)),
        None if text.trim().is_empty() => Ok(None),
        None => Err("the file is not a YAML mapping".to_owned()),
    }
}

fn span(node: &YamlNode) -> Range<usize> {
    let range = node.byte_range();
    range.start as usize..range.end as usize
}

/// The keys of the program and its arguments in this host's entries.
fn program_key(host: Host) -> &'static str {
    if host == Host::Goose { "cmd" } else { "command" }
}

/// The servers: Goose's `extensions` map, Continue's `mcpServers` list.
pub fn scan(file: &HostFile, text: &str) -> Result<Vec<Found>, String> {
    let Some(root) = parse(text)? else {
        return Ok(Vec::new());
    };
    let section = top_section(file);
    let Some(servers) = root.get(section.path[0].as_str()) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    if let Some(map) = servers.as_mapping() {
        for (key, value) in map.iter() {
            let name = key.as_scalar().map(|s| s.as_string()).unwrap_or_default();
            found.push(read_entry(file.host, section.clone(), name, &value));
        }
    } else if let Some(list) = servers.as_sequence() {
        for value in list.values() {
            let name = value
                .get("name")
                .and_then(|n| n.as_scalar().map(|s| s.as_string()))
                .unwrap_or_default();
            found.push(read_entry(file.host, section.clone(), name, &value));
        }
    } else if !text[span(&servers)].trim().is_empty() {
        return Err(format!("its {} is neither a map nor a list", section.path[0]));
    }
    Ok(found)
}

fn scalar(node: &YamlNode) -> Option<String> {
    node.as_scalar().map(|s| s.as_string())
}

fn read_entry(host: Host, section: Section, name: String, value: &YamlNode) -> Found {
    let mut entry = Entry::default();
    let mut has_args = false;
    if value.as_mapping().is_none() {
        entry.odd = Some("it is not a map".to_owned());
    }
    if let Some(program) = value.get(program_key(host)) {
        match scalar(&program) {
            Some(program) => entry.program = Some(program),
            None => entry.odd = Some("its command is not a string".to_owned()),
        }
    }
    if let Some(args) = value.get("args") {
        has_args = true;
        let strings: Option<Vec<String>> = args
            .as_sequence()
            .and_then(|s| s.values().map(|v| scalar(&v)).collect());
        match strings {
            Some(args) => entry.args = args,
            // `args:` with nothing after it is an empty list to the hosts.
            None if scalar(&args).is_some_and(|s| s.is_empty() || s == "null") => {}
            None => entry.odd = Some("its args are not a list of strings".to_owned()),
        }
    }
    entry.transport = value.get("type").and_then(|t| scalar(&t));
    for key in ["url", "uri"] {
        if let Some(url) = value.get(key).and_then(|u| scalar(&u)) {
            entry.url = Some((key.to_owned(), url));
            entry.odd = Some("remote servers in YAML configs are not wrapped".to_owned());
        }
    }
    Found {
        section,
        name,
        entry,
        span: Some(span(value)),
        has_args,
    }
}

/// A scalar as YAML would read it back as the same string: plain where
/// that is safe, else double-quoted.
fn yaml_scalar(value: &str) -> String {
    let plain = value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || "/._~".contains(c))
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./@+=~-".contains(c))
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n" | "~"
        );
    if plain { value.to_owned() } else { quote(value) }
}

fn locate(root: &Mapping, found: &Found) -> Option<YamlNode> {
    let servers = root.get(found.section.path[0].as_str())?;
    if let Some(map) = servers.as_mapping() {
        return map.get(found.name.as_str());
    }
    servers
        .as_sequence()?
        .values()
        .find(|v| v.get("name").and_then(|n| scalar(&n)).as_deref() == Some(found.name.as_str()))
}

/// `text` with `changes` made.
pub fn edit(host: Host, text: &str, changes: &[(Found, Change)]) -> Result<String, String> {
    let root = parse(text)?.ok_or("the file is empty")?;
    let mut splices = Splices::default();
    for (found, change) in changes {
        let node = locate(&root, found).ok_or_else(|| format!("server {:?} is gone", found.name))?;
        let program = node
            .get(program_key(host))
            .ok_or_else(|| format!("server {:?} has no command", found.name))?;
        match change {
            Change::Wrap {
                program: elicit,
                argv,
                ..
            } => {
                splices.put(span(&program), yaml_scalar(elicit));
                let head: Vec<String> = stdio_head(argv)?.iter().map(|a| yaml_scalar(a)).collect();
                match node.get("args") {
                    Some(args) if args.as_sequence().is_some() => prepend(text, &args, &head, &mut splices),
                    Some(args) => splices.put(
                        span(&args),
                        format!(" [{}]", head.join(", ")).trim_start().to_owned(),
                    ),
                    None => {
                        let at = line_end(text, span(&program).end);
                        let indent = indentation(text, span(&program).start);
                        let eol = line_break(text);
                        let newline = if at == text.len() && !text.ends_with('\n') {
                            eol
                        } else {
                            ""
                        };
                        splices.put(
                            at..at,
                            format!("{newline}{indent}args: [{}]{eol}", head.join(", ")),
                        );
                    }
                }
            }
            Change::Unwrap {
                original,
                wrapped,
                had_args,
            } => {
                let current = &text[span(&node)];
                match (original, wrapped) {
                    (Some(original), Some(wrapped)) if current == wrapped => {
                        splices.put(span(&node), original.clone())
                    }
                    _ => {
                        let (inner, rest) = inner_command(&found.entry)
                            .ok_or_else(|| format!("server {:?} is not as wrap left it", found.name))?;
                        splices.put(span(&program), yaml_scalar(inner));
                        let args = node.get("args").ok_or("it has no args")?;
                        drop_front(text, &args, rest.is_empty() && !had_args, &mut splices)?;
                    }
                }
            }
        }
    }
    splices.apply(text)
}

/// Where the line holding `at` ends, after its line break.
fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |i| at + i + 1)
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

fn items(args: &YamlNode) -> Vec<Range<usize>> {
    args.as_sequence()
        .map(|s| s.values().map(|v| span(&v)).collect())
        .unwrap_or_default()
}

fn is_flow(text: &str, args: &YamlNode) -> bool {
    text[span(args)].trim_start().starts_with('[')
}

fn prepend(text: &str, args: &YamlNode, head: &[String], splices: &mut Splices) {
    let whole = span(args);
    let items = items(args);
    if is_flow(text, args) {
        match items.first() {
            Some(first) => {
                let sep = separator(text, whole.start + 1, first.start);
                let insert: String = head.iter().map(|h| format!("{h},{sep}")).collect();
                splices.put(first.start..first.start, insert);
            }
            None => splices.put(whole, format!("[{}]", head.join(", "))),
        }
        return;
    }
    let Some(first) = items.first() else { return };
    // Block list: new `- ITEM` lines before the first, indented as it is.
    let dash = text[..first.start].rfind('-').unwrap_or(first.start);
    let start = line_start(text, dash);
    let lead = &text[start..dash];
    let gap = &text[dash + 1..first.start];
    let eol = line_break(text);
    let insert: String = head.iter().map(|h| format!("{lead}-{gap}{h}{eol}")).collect();
    splices.put(start..start, insert);
}

fn drop_front(text: &str, args: &YamlNode, remove_key: bool, splices: &mut Splices) -> Result<(), String> {
    let whole = span(args);
    let items = items(args);
    if items.len() < 3 {
        return Err("its args are shorter than wrap left them".to_owned());
    }
    if remove_key {
        // The `args:` line wrap added, and what follows it.
        let key = text[..whole.start].rfind("args").ok_or("its args key is gone")?;
        let end = if is_flow(text, args) {
            line_end(text, whole.end)
        } else {
            line_end(text, items[2].end)
        };
        splices.put(line_start(text, key)..end, "");
        return Ok(());
    }
    if is_flow(text, args) {
        match items.get(3) {
            Some(next) => splices.put(items[0].start..next.start, ""),
            None => splices.put(whole, "[]"),
        }
        return Ok(());
    }
    let start = line_start(text, text[..items[0].start].rfind('-').unwrap_or(items[0].start));
    match items.get(3) {
        Some(next) => splices.put(start..line_start(text, next.start), ""),
        None => return Err("a block list cannot be left empty in place".to_owned()),
    }
    Ok(())
}
