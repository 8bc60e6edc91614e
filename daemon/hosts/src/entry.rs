//! One server entry as every format sees it, and the rule that decides
//! what `wrap` does to it: put `elicit proxy --` in front of a stdio
//! server, `elicit proxy --url` in place of a remote one the proxy can
//! reach as the host would, leave anything else alone and say why.

use serde::Serialize;

use crate::host::Host;

/// A server entry, read from any format: what the rule needs to decide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// The program the host starts, if the entry has one.
    pub program: Option<String>,
    /// Its arguments (for opencode's `command: [argv]`, the argv's tail).
    pub args: Vec<String>,
    /// The entry's `type`, if it says one.
    pub transport: Option<String>,
    /// A remote server's address, and the key that holds it.
    pub url: Option<(String, String)>,
    /// Headers for a remote server, as written.
    pub headers: Vec<(String, String)>,
    /// Why the format's reader cannot take this entry as it is (an
    /// argument that is not a string, a key the proxy cannot carry).
    pub odd: Option<String>,
}

/// What `wrap` does with one entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Verdict {
    /// Wrap it: the arguments of `elicit` that replace the entry's
    /// command line (`proxy -- CMD ARGS…` or `proxy --url URL …`).
    Wrap {
        /// Everything after `elicit`.
        argv: Vec<String>,
        /// Whether it is a remote server made a stdio one.
        remote: bool,
    },
    /// Already behind `elicit proxy`: a second `wrap` leaves it alone.
    Wrapped,
    /// Left alone, for this reason.
    Leave {
        /// Why, for the person reading `elicit hosts`.
        reason: String,
    },
}

/// Whether `program` names `elicit`: the bare name, or a path whose
/// last part is `elicit`.
pub fn is_elicit(program: &str) -> bool {
    program == "elicit" || program.ends_with("/elicit")
}

/// Whether the entry already runs `elicit proxy …`.
pub fn is_wrapped(entry: &Entry) -> bool {
    entry.program.as_deref().is_some_and(is_elicit) && entry.args.first().is_some_and(|a| a == "proxy")
}

/// The command a stdio entry wrapped by us ran before, if it has the
/// exact shape `wrap` writes: `elicit proxy -- CMD ARGS…`.
pub fn inner_command(entry: &Entry) -> Option<(&str, &[String])> {
    if !is_wrapped(entry) || entry.args.get(1).map(String::as_str) != Some("--") {
        return None;
    }
    let program = entry.args.get(2)?;
    Some((program, &entry.args[3..]))
}

/// Decides what `wrap` does with `entry` of `host`.
pub fn judge(host: Host, entry: &Entry) -> Verdict {
    if is_wrapped(entry) {
        return Verdict::Wrapped;
    }
    if let Some(odd) = &entry.odd {
        return leave(odd);
    }
    if let Some((key, url)) = &entry.url {
        return judge_remote(host, entry, key, url);
    }
    match (&entry.program, entry.transport.as_deref()) {
        (Some(program), None | Some("stdio" | "local")) => {
            let mut argv = vec!["proxy".to_owned(), "--".to_owned(), program.clone()];
            argv.extend(entry.args.iter().cloned());
            Verdict::Wrap { argv, remote: false }
        }
        (Some(_), Some(other)) => leave(&format!("its type {other:?} is not one elicit knows")),
        (None, Some(other)) => leave(&format!(
            "its type {other:?} runs inside the host, not as a command"
        )),
        (None, None) => leave("it has neither a command nor a URL"),
    }
}

fn judge_remote(host: Host, entry: &Entry, key: &str, url: &str) -> Verdict {
    // The proxy speaks Streamable HTTP only; which key or type means
    // that differs from host to host.
    let streamable = match (host, key, entry.transport.as_deref()) {
        (Host::Gemini | Host::Qwen, "httpUrl", _) => true,
        (Host::Gemini | Host::Qwen, _, _) => false, // `url` is SSE there
        (_, _, Some("sse")) => false,
        (Host::Claude | Host::VsCode | Host::Copilot, _, Some("http" | "streamable-http")) => true,
        (Host::Claude | Host::VsCode | Host::Copilot, _, _) => false,
        (Host::Opencode, _, Some("remote")) => true,
        (Host::Cline, _, Some("http" | "streamable-http" | "streamableHttp")) => true,
        (Host::Cursor | Host::Windsurf | Host::Zed, _, None | Some("http" | "streamable-http")) => true,
        _ => false,
    };
    if !streamable {
        return leave("a remote server over SSE: elicit proxy speaks Streamable HTTP only");
    }
    if !matches!(
        host,
        Host::Claude
            | Host::VsCode
            | Host::Copilot
            | Host::Cursor
            | Host::Windsurf
            | Host::Gemini
            | Host::Qwen
            | Host::Zed
            | Host::Opencode
    ) {
        return leave("remote servers of this host are not wrapped");
    }
    if url.contains("${") {
        return leave("its URL uses the host's variables, which only the host can fill in");
    }
    let mut argv = vec!["proxy".to_owned(), "--url".to_owned(), url.to_owned()];
    for (name, value) in &entry.headers {
        if value.contains("${input:") {
            return leave(&format!(
                "its header {name} uses the host's input variables (${{input:…}}), which only the host can fill in"
            ));
        }
        match env_reference(value) {
            Some(variable) => {
                argv.push("--header-env".to_owned());
                argv.push(format!("{name}={variable}"));
            }
            None if value.contains("${") || value.contains("{env:") => {
                return leave(&format!(
                    "its header {name} mixes text and variables, which --header-env cannot carry"
                ));
            }
            None => {
                return leave(&format!(
                    "its header {name} holds a literal value, which on elicit's command line every user could read"
                ));
            }
        }
    }
    Verdict::Wrap { argv, remote: true }
}

/// `VAR` of a header value that is exactly `${VAR}`, `${env:VAR}` or
/// `{env:VAR}` (opencode).
fn env_reference(value: &str) -> Option<&str> {
    let inner = value
        .strip_prefix("${env:")
        .or_else(|| value.strip_prefix("${"))
        .or_else(|| value.strip_prefix("{env:"))?
        .strip_suffix('}')?;
    let ok = !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some(inner)
}

fn leave(reason: &str) -> Verdict {
    Verdict::Leave {
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(program: &str, args: &[&str]) -> Entry {
        Entry {
            program: Some(program.to_owned()),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..Entry::default()
        }
    }

    #[test]
    fn a_stdio_server_gets_the_proxy_in_front() {
        let verdict = judge(Host::Claude, &stdio("npx", &["-y", "pkg"]));
        assert_eq!(
            verdict,
            Verdict::Wrap {
                argv: ["proxy", "--", "npx", "-y", "pkg"].map(String::from).to_vec(),
                remote: false
            }
        );
    }

    #[test]
    fn a_wrapped_server_is_recognised_by_name_or_path() {
        assert_eq!(
            judge(Host::Claude, &stdio("elicit", &["proxy", "--", "x"])),
            Verdict::Wrapped
        );
        assert_eq!(
            judge(Host::Claude, &stdio("/usr/bin/elicit", &["proxy", "--url", "u"])),
            Verdict::Wrapped
        );
        // Another program called with `proxy` first is not ours.
        assert!(matches!(
            judge(Host::Claude, &stdio("notelicit", &["proxy"])),
            Verdict::Wrap { .. }
        ));
    }

    #[test]
    fn input_variables_and_literal_secrets_keep_a_remote_entry_as_it_is() {
        let mut entry = Entry {
            transport: Some("http".into()),
            url: Some(("url".into(), "https://x/mcp".into())),
            headers: vec![("Authorization".into(), "Bearer ${input:token}".into())],
            ..Entry::default()
        };
        let Verdict::Leave { reason } = judge(Host::VsCode, &entry) else {
            panic!()
        };
        assert!(reason.contains("input"), "{reason}");
        entry.headers = vec![("X-Key".into(), "secret".into())];
        assert!(matches!(judge(Host::VsCode, &entry), Verdict::Leave { .. }));
        entry.headers = vec![("X-Key".into(), "${KEY}".into())];
        assert_eq!(
            judge(Host::VsCode, &entry),
            Verdict::Wrap {
                argv: ["proxy", "--url", "https://x/mcp", "--header-env", "X-Key=KEY"]
                    .map(String::from)
                    .to_vec(),
                remote: true
            }
        );
    }

    #[test]
    fn sse_is_left_alone() {
        let entry = Entry {
            url: Some(("url".into(), "https://x/sse".into())),
            ..Entry::default()
        };
        assert!(matches!(judge(Host::Gemini, &entry), Verdict::Leave { .. }));
        let entry = Entry {
            transport: Some("sse".into()),
            url: Some(("url".into(), "https://x/sse".into())),
            ..Entry::default()
        };
        assert!(matches!(judge(Host::Claude, &entry), Verdict::Leave { .. }));
    }
}
