//! JSON and JSONC host files (Claude Code, Gemini CLI, VS Code, Zed, …),
//! edited by byte range on `jsonc-parser`'s syntax tree: comments,
//! trailing commas, key order and indentation stay, because nothing but
//! the changed values is written.

use jsonc_parser::ast::{Array, Object, ObjectProp, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

use super::splice::{Splices, quote, separator};
use super::{Change, Found, stdio_head};
use crate::entry::{Entry, inner_command};
use crate::host::{Host, HostFile, Scope, Section, top_section};

fn parse(text: &str) -> Result<Option<Value<'_>>, String> {
    jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
        .map(|parsed| parsed.value)
        .map_err(|error| error.to_string())
}

/// The servers of every section of the file.
pub fn scan(file: &HostFile, text: &str) -> Result<Vec<Found>, String> {
    let Some(root) = parse(text)? else {
        return Ok(Vec::new()); // an empty file holds no servers
    };
    let root = root.as_object().ok_or("the file is not a JSON object")?;
    let mut found = Vec::new();
    for (section, servers) in sections(file, root)? {
        for prop in &servers.properties {
            found.push(read_entry(file.host, section.clone(), prop));
        }
    }
    Ok(found)
}

/// The objects holding servers, with their sections: the host's key, and
/// for Claude Code's `~/.claude.json` each `projects[DIR].mcpServers`.
fn sections<'a, 'b>(file: &HostFile, root: &'b Object<'a>) -> Result<Vec<(Section, &'b Object<'a>)>, String> {
    let mut out = Vec::new();
    let top = top_section(file);
    if let Some(prop) = root.get(&top.path[0]) {
        let servers = prop
            .value
            .as_object()
            .ok_or_else(|| format!("its {:?} is not an object", top.path[0]))?;
        out.push((top, servers));
    }
    let claude_user = file.host == Host::Claude && file.scope == Scope::User;
    if let (true, Some(projects)) = (claude_user, root.get_object("projects")) {
        for project in &projects.properties {
            let Some(servers) = project.value.as_object().and_then(|p| p.get_object("mcpServers")) else {
                continue;
            };
            let dir = project.name.as_str().to_owned();
            let section = Section {
                scope: Scope::Local(dir.clone().into()),
                path: vec!["projects".to_owned(), dir, "mcpServers".to_owned()],
            };
            out.push((section, servers));
        }
    }
    Ok(out)
}

fn strings(array: &Array<'_>) -> Option<Vec<String>> {
    array
        .elements
        .iter()
        .map(|value| value.as_string_lit().map(|s| s.value.to_string()))
        .collect()
}

fn read_entry(host: Host, section: Section, prop: &ObjectProp<'_>) -> Found {
    let name = prop.name.as_str().to_owned();
    let mut entry = Entry::default();
    let mut has_args = false;
    match prop.value.as_object() {
        None => entry.odd = Some("it is not an object".to_owned()),
        Some(object) => {
            let object = body(host, object);
            let (command, args) = match object.get("command").map(|p| &p.value) {
                // Zed's older shape: `command: {path, args, env}`.
                Some(Value::Object(inner)) => (inner.get("path").map(|p| &p.value), inner.get_array("args")),
                other => (other, object.get_array("args")),
            };
            match command {
                Some(Value::StringLit(program)) => entry.program = Some(program.value.to_string()),
                // opencode: `command: [argv]`.
                Some(Value::Array(argv)) if host == Host::Opencode => match strings(argv) {
                    Some(argv) if !argv.is_empty() => {
                        entry.program = Some(argv[0].clone());
                        entry.args = argv[1..].to_vec();
                    }
                    _ => entry.odd = Some("its command is not a list of strings".to_owned()),
                },
                Some(_) => entry.odd = Some("its command is not a string".to_owned()),
                None => {}
            }
            if let Some(args) = args {
                has_args = true;
                match strings(args) {
                    Some(args) => entry.args = args,
                    None => entry.odd = Some("its args are not all strings".to_owned()),
                }
            }
            entry.transport = object.get_string("type").map(|s| s.value.to_string());
            for key in ["url", "httpUrl", "serverUrl"] {
                if let Some(url) = object.get_string(key) {
                    entry.url = Some((key.to_owned(), url.value.to_string()));
                    break;
                }
            }
            if let Some(headers) = object.get("headers") {
                match headers.value.as_object() {
                    Some(headers) => {
                        for header in &headers.properties {
                            match header.value.as_string_lit() {
                                Some(value) => entry
                                    .headers
                                    .push((header.name.as_str().to_owned(), value.value.to_string())),
                                None => entry.odd = Some("a header's value is not a string".to_owned()),
                            }
                        }
                    }
                    None => entry.odd = Some("its headers are not an object".to_owned()),
                }
            }
            if object
                .get_string("source")
                .is_some_and(|s| s.value == "extension")
            {
                entry.odd = Some("a Zed extension's server, which Zed starts itself".to_owned());
            }
            if entry.url.is_some() && entry.program.is_some() {
                entry.odd = Some("it has both a command and a URL".to_owned());
            }
        }
    }
    Found {
        section,
        name,
        entry,
        span: Some(prop.value.range().start..prop.value.range().end),
        has_args,
    }
}

/// The entry object `found` names, in the parse of the same text.
fn locate<'a, 'b>(root: &'b Object<'a>, found: &Found) -> Option<&'b Object<'a>> {
    let mut object = root;
    for key in &found.section.path {
        object = object.get_object(key)?;
    }
    object.get_object(&found.name)
}

/// `text` with `changes` made.
pub fn edit(file: &HostFile, text: &str, changes: &[(Found, Change)]) -> Result<String, String> {
    let root = parse(text)?.ok_or("the file is empty")?;
    let root = root.as_object().ok_or("the file is not a JSON object")?;
    let mut splices = Splices::default();
    for (found, change) in changes {
        let object = locate(root, found).ok_or_else(|| format!("server {:?} is gone", found.name))?;
        match change {
            Change::Wrap {
                program,
                argv,
                remote: false,
            } => wrap_stdio(file.host, text, object, program, argv, &mut splices)?,
            Change::Wrap {
                program,
                argv,
                remote: true,
            } => wrap_remote(file.host, text, object, program, argv, &mut splices)?,
            Change::Unwrap {
                original,
                wrapped,
                had_args,
            } => {
                let current = &text[object.range.start..object.range.end];
                match (original, wrapped) {
                    (Some(original), Some(wrapped)) if current == wrapped => {
                        splices.put(object.range.start..object.range.end, original.clone());
                    }
                    _ if inner_command(&found.entry).is_some() => {
                        unwrap_stdio(file.host, text, object, &found.entry, *had_args, &mut splices)?
                    }
                    (Some(original), _) => {
                        splices.put(object.range.start..object.range.end, original.clone())
                    }
                    (None, _) => return Err(format!("server {:?} is not as wrap left it", found.name)),
                }
            }
        }
    }
    splices.apply(text)
}

/// The object that says how to start the server: the entry, or the
/// `transport` object `cline mcp add` writes (`{"transport": {"type":
/// "stdio", "command", "args"}}`; Cline also reads the flat shape).
fn body<'a, 'b>(host: Host, object: &'b Object<'a>) -> &'b Object<'a> {
    match object.get_object("transport") {
        Some(transport) if host == Host::Cline => transport,
        _ => object,
    }
}

/// The object holding the command and args: the entry (or its
/// [`body`]), or Zed's older `command: {path, args}`; with the key of the
/// program in it.
fn command_holder<'a, 'b>(host: Host, object: &'b Object<'a>) -> (&'b Object<'a>, &'static str) {
    let object = body(host, object);
    match object.get_object("command") {
        Some(inner) => (inner, "path"),
        None => (object, "command"),
    }
}

fn wrap_stdio(
    host: Host,
    text: &str,
    object: &Object<'_>,
    program: &str,
    argv: &[String],
    splices: &mut Splices,
) -> Result<(), String> {
    let argv = stdio_head(argv)?;
    if host == Host::Opencode {
        let command = object.get_array("command").ok_or("its command is not a list")?;
        let mut head = vec![program.to_owned()];
        head.extend(argv[..2].iter().cloned());
        prepend(text, command, &head, splices);
        return Ok(());
    }
    let (holder, key) = command_holder(host, object);
    let command = holder.get(key).ok_or("it has no command")?;
    splices.put(range(&command.value), quote(program));
    match holder.get_array("args") {
        Some(args) => prepend(text, args, argv, splices),
        None => {
            let sep = prop_separator(text, holder, command);
            let list = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ");
            let end = command.range.end;
            splices.put(end..end, format!(",{sep}\"args\": [{list}]"));
        }
    }
    Ok(())
}

fn unwrap_stdio(
    host: Host,
    text: &str,
    object: &Object<'_>,
    entry: &Entry,
    had_args: bool,
    splices: &mut Splices,
) -> Result<(), String> {
    let (inner, rest) = inner_command(entry).ok_or("it is not wrapped")?;
    if host == Host::Opencode {
        let command = object.get_array("command").ok_or("its command is not a list")?;
        drop_front(text, command, 3, splices);
        return Ok(());
    }
    let (holder, key) = command_holder(host, object);
    let command = holder.get(key).ok_or("it has no command")?;
    splices.put(range(&command.value), quote(inner));
    let args = holder.get("args").ok_or("it has no args")?;
    let list = args.value.as_array().ok_or("its args are not a list")?;
    if rest.is_empty() && !had_args {
        remove_prop(text, holder, args, splices);
    } else {
        drop_front(text, list, 3, splices);
    }
    Ok(())
}

fn wrap_remote(
    host: Host,
    text: &str,
    object: &Object<'_>,
    program: &str,
    argv: &[String],
    splices: &mut Splices,
) -> Result<(), String> {
    let url = ["url", "httpUrl", "serverUrl"]
        .into_iter()
        .find_map(|key| object.get(key))
        .ok_or("it has no URL")?;
    let sep = prop_separator(text, object, url);
    let command = if host == Host::Opencode {
        let mut all = vec![quote(program)];
        all.extend(argv.iter().map(|a| quote(a)));
        format!("\"command\": [{}]", all.join(", "))
    } else {
        let list = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ");
        format!("\"command\": {},{sep}\"args\": [{list}]", quote(program))
    };
    splices.put(url.range.start..url.range.end, command);
    if let Some(headers) = object.get("headers") {
        remove_prop(text, object, headers, splices);
    }
    if let Some(kind) = object.get("type") {
        let local = if matches!(host, Host::Opencode | Host::Copilot) {
            "local"
        } else {
            "stdio"
        };
        splices.put(range(&kind.value), quote(local));
    }
    Ok(())
}

fn range(value: &Value<'_>) -> std::ops::Range<usize> {
    let r = value.range();
    r.start..r.end
}

/// Inserts `items` before the first element of `array`, laid out as its
/// elements are.
fn prepend(text: &str, array: &Array<'_>, items: &[String], splices: &mut Splices) {
    let quoted: Vec<String> = items.iter().map(|a| quote(a)).collect();
    match array.elements.first() {
        Some(first) => {
            let sep = separator(text, array.range.start + 1, first.range().start);
            let mut insert = String::new();
            for item in &quoted {
                insert.push_str(item);
                insert.push(',');
                insert.push_str(&sep);
            }
            let at = first.range().start;
            splices.put(at..at, insert);
        }
        None => splices.put(
            array.range.start..array.range.end,
            format!("[{}]", quoted.join(", ")),
        ),
    }
}

/// Removes the first `count` elements of `array`: what [`prepend`] added.
fn drop_front(text: &str, array: &Array<'_>, count: usize, splices: &mut Splices) {
    let elements = &array.elements;
    match elements.get(count) {
        Some(next) => splices.put(elements[0].range().start..next.range().start, ""),
        None if elements.len() == count => {
            // Nothing left: the list as it was when empty.
            let _ = text;
            splices.put(array.range.start..array.range.end, "[]");
        }
        None => {}
    }
}

/// The text between two properties of `object`, as before `prop`.
fn prop_separator(text: &str, object: &Object<'_>, prop: &ObjectProp<'_>) -> String {
    separator(text, object.range.start + 1, prop.range.start)
}

/// Removes `prop` from `object`, with the comma that joined it.
fn remove_prop(text: &str, object: &Object<'_>, prop: &ObjectProp<'_>, splices: &mut Splices) {
    let props = &object.properties;
    let Some(index) = props.iter().position(|p| p.range.start == prop.range.start) else {
        return;
    };
    if let Some(next) = props.get(index + 1) {
        splices.put(prop.range.start..next.range.start, "");
    } else if index > 0 {
        splices.put(props[index - 1].range.end..prop.range.end, "");
    } else {
        let _ = text;
        splices.put(prop.range.start..prop.range.end, "");
    }
}
