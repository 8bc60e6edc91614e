//! Codex's `config.toml`, edited with `toml_edit`, which keeps comments,
//! key order and the layout of every value it is not asked to change.

use toml_edit::{Array, DocumentMut, Item, TableLike, Value};

use super::{Change, Found, stdio_head};
use crate::entry::{Entry, inner_command};
use crate::host::{HostFile, Section, top_section};

fn parse(text: &str) -> Result<DocumentMut, String> {
    let document: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().trim().to_owned())?;
    // An edit is only as careful as the round trip under it.
    if document.to_string() != text {
        return Err("toml_edit cannot write this file back unchanged".to_owned());
    }
    Ok(document)
}

/// The servers under `[mcp_servers]`.
pub fn scan(file: &HostFile, text: &str) -> Result<Vec<Found>, String> {
    let document = parse(text)?;
    let section = top_section(file);
    let Some(servers) = document.get(&section.path[0]) else {
        return Ok(Vec::new());
    };
    let servers = servers.as_table_like().ok_or("its mcp_servers is not a table")?;
    Ok(servers
        .iter()
        .map(|(name, item)| read_entry(section.clone(), name, item))
        .collect())
}

fn read_entry(section: Section, name: &str, item: &Item) -> Found {
    let mut entry = Entry::default();
    let mut has_args = false;
    match item.as_table_like() {
        None => entry.odd = Some("it is not a table".to_owned()),
        Some(table) => {
            match table.get("command").map(|i| i.as_str()) {
                Some(Some(program)) => entry.program = Some(program.to_owned()),
                Some(None) => entry.odd = Some("its command is not a string".to_owned()),
                None => {}
            }
            if let Some(args) = table.get("args") {
                has_args = true;
                let strings: Option<Vec<String>> = args
                    .as_array()
                    .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_owned)).collect());
                match strings {
                    Some(args) => entry.args = args,
                    None => entry.odd = Some("its args are not a list of strings".to_owned()),
                }
            }
            if let Some(url) = table.get("url").and_then(Item::as_str) {
                entry.url = Some(("url".to_owned(), url.to_owned()));
                // Codex's remote entries: elicit wraps none yet.
                entry.odd = Some("remote servers in Codex's config are not wrapped".to_owned());
            }
        }
    }
    Found {
        section,
        name: name.to_owned(),
        entry,
        span: None,
        has_args,
    }
}

/// `text` with `changes` made.
pub fn edit(text: &str, changes: &[(Found, Change)]) -> Result<String, String> {
    let mut document = parse(text)?;
    for (found, change) in changes {
        let table = document
            .get_mut(&found.section.path[0])
            .and_then(|servers| servers.get_mut(&found.name))
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| format!("server {:?} is gone", found.name))?;
        match change {
            Change::Wrap { program, argv, .. } => wrap(table, program, stdio_head(argv)?)?,
            Change::Unwrap { had_args, .. } => {
                let (inner, _) = inner_command(&found.entry)
                    .ok_or_else(|| format!("server {:?} is not as wrap left it", found.name))?;
                set_string(table, "command", inner)?;
                let args = table
                    .get_mut("args")
                    .and_then(Item::as_array_mut)
                    .ok_or("its args are not a list")?;
                let lead = args.get(0).map(|v| v.decor().prefix().cloned());
                for _ in 0..3 {
                    args.remove(0);
                }
                if args.is_empty() && !had_args {
                    table.remove("args");
                } else if let (Some(first), Some(Some(lead))) = (args.get_mut(0), lead) {
                    first.decor_mut().set_prefix(lead);
                }
            }
        }
    }
    Ok(document.to_string())
}

fn set_string(table: &mut dyn TableLike, key: &str, to: &str) -> Result<(), String> {
    let value = table
        .get_mut(key)
        .and_then(Item::as_value_mut)
        .ok_or_else(|| format!("its {key} is not a value"))?;
    let decor = value.decor().clone();
    *value = Value::from(to);
    *value.decor_mut() = decor;
    Ok(())
}

fn wrap(table: &mut dyn TableLike, program: &str, head: &[String]) -> Result<(), String> {
    set_string(table, "command", program)?;
    match table.get_mut("args").and_then(Item::as_array_mut) {
        Some(args) => prepend(args, head),
        None => {
            let mut args = Array::new();
            for item in head {
                args.push(item.as_str());
            }
            table.insert("args", Item::Value(Value::Array(args)));
        }
    }
    Ok(())
}

/// Inserts `head` before the first element, laid out as the elements are:
/// on their own lines if they are, else one space apart.
fn prepend(args: &mut Array, head: &[String]) {
    let Some(first) = args.get(0) else {
        for item in head {
            args.push(item.as_str());
        }
        return;
    };
    let lead = first
        .decor()
        .prefix()
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_owned();
    let rest = if lead.contains('\n') {
        lead.clone()
    } else {
        " ".to_owned()
    };
    if let Some(first) = args.get_mut(0) {
        first.decor_mut().set_prefix(rest.clone());
    }
    for (index, item) in head.iter().enumerate().rev() {
        let mut value = Value::from(item.as_str());
        let prefix = if index == 0 { lead.clone() } else { rest.clone() };
        value.decor_mut().set_prefix(prefix);
        value.decor_mut().set_suffix("");
        args.insert_formatted(0, value);
    }
}
