//! How long each origin field may be: a client describes itself in a few
//! names and a path, and every byte of it is held for the session's life
//! (in memory, in the store, in every `ListForms` reply). A longer field
//! is refused with its name, never cut: a cut path or command would show
//! the user something other than what the client said.

use crate::Origin;

/// Bytes of a name: `server`, `host`, their versions, `icon`.
pub const MAX_ORIGIN_NAME_BYTES: usize = 256;

/// Bytes of a path or a command line: `cwd`, `command`, `verified-exe`, and
/// `verified-args` counted together (each argument plus one separator).
pub const MAX_ORIGIN_PATH_BYTES: usize = 4096;

/// The bound of origin field `key` (its kebab-case name on the bus), or
/// `None` for a key that is not stored (unknown keys are ignored; `pid`,
/// `remote` and the verified ids are numbers or flags).
pub fn origin_field_limit(key: &str) -> Option<usize> {
    match key {
        "server" | "host" | "server-version" | "host-version" | "icon" | "hub" => Some(MAX_ORIGIN_NAME_BYTES),
        "command" | "cwd" | "hub-cwd" | "verified-exe" | "verified-args" => Some(MAX_ORIGIN_PATH_BYTES),
        _ => None,
    }
}

/// Why origin field `key` of `len` bytes is refused, if it is: the one
/// wording of this refusal, on the bus, on the asker socket and for a call
/// too large to be read whole.
pub fn origin_field_refusal(key: &str, len: usize) -> Option<String> {
    let limit = origin_field_limit(key)?;
    (len > limit).then(|| format!("origin field '{key}' is {len} bytes, more than the limit of {limit}"))
}

impl Origin {
    /// Checks every field against its bound ([`origin_field_limit`]);
    /// the error names each field that is too long, with its size.
    pub fn check_sizes(&self) -> Result<(), String> {
        let args = self
            .verified_args
            .as_ref()
            .map(|args| args.iter().map(|a| a.len() + 1).sum::<usize>());
        let lens = [
            ("server", self.server.as_ref().map(String::len)),
            ("host", self.host.as_ref().map(String::len)),
            ("server-version", self.server_version.as_ref().map(String::len)),
            ("host-version", self.host_version.as_ref().map(String::len)),
            ("icon", self.icon.as_ref().map(String::len)),
            ("command", self.command.as_ref().map(String::len)),
            ("cwd", self.cwd.as_ref().map(String::len)),
            ("hub", self.hub.as_ref().map(String::len)),
            ("hub-cwd", self.hub_cwd.as_ref().map(String::len)),
            ("verified-exe", self.verified_exe.as_ref().map(String::len)),
            ("verified-args", args),
        ];
        let refused: Vec<String> = lens
            .into_iter()
            .filter_map(|(key, len)| origin_field_refusal(key, len?))
            .collect();
        match refused.is_empty() {
            true => Ok(()),
            false => Err(refused.join("; ")),
        }
    }
}

/// `text` shortened to at most `limit` bytes on a character boundary,
/// ending in `…` when it was cut.
fn fit(text: &mut String, limit: usize) {
    if text.len() <= limit {
        return;
    }
    let mut end = limit.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
}

impl Origin {
    /// The origin shortened to fit every bound, each cut field ending in
    /// `…`: what a client sends, so that a long command line or a server
    /// that calls itself by a long name still gets a session. The broker
    /// itself never cuts; it refuses ([`Origin::check_sizes`]).
    pub fn fitted(mut self) -> Origin {
        for (field, limit) in [
            (&mut self.server, MAX_ORIGIN_NAME_BYTES),
            (&mut self.host, MAX_ORIGIN_NAME_BYTES),
            (&mut self.server_version, MAX_ORIGIN_NAME_BYTES),
            (&mut self.host_version, MAX_ORIGIN_NAME_BYTES),
            (&mut self.command, MAX_ORIGIN_PATH_BYTES),
            (&mut self.cwd, MAX_ORIGIN_PATH_BYTES),
            (&mut self.hub, MAX_ORIGIN_NAME_BYTES),
            (&mut self.hub_cwd, MAX_ORIGIN_PATH_BYTES),
        ] {
            if let Some(text) = field {
                fit(text, limit);
            }
        }
        // A path cut short names another file, and an icon name cut short
        // another icon: dropped rather than cut.
        if self
            .verified_exe
            .as_ref()
            .is_some_and(|e| e.len() > MAX_ORIGIN_PATH_BYTES)
        {
            self.verified_exe = None;
        }
        if self
            .icon
            .as_ref()
            .is_some_and(|i| i.len() > MAX_ORIGIN_NAME_BYTES)
        {
            self.icon = None;
        }
        if let Some(args) = &mut self.verified_args {
            let mut total = 0;
            let kept = args
                .iter()
                .take_while(|a| {
                    total += a.len() + 1;
                    total <= MAX_ORIGIN_PATH_BYTES
                })
                .count();
            args.truncate(kept);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_field_is_refused_by_name_past_its_bound() {
        let at_bound = Origin {
            server: Some("s".repeat(256)),
            host: Some("h".repeat(256)),
            cwd: Some("/".repeat(4096)),
            command: Some("c".repeat(4096)),
            ..Origin::default()
        };
        assert_eq!(at_bound.check_sizes(), Ok(()));
        let past = Origin {
            server: Some("s".repeat(257)),
            cwd: Some("/".repeat(4097)),
            ..at_bound
        };
        let error = past.check_sizes().expect_err("too long");
        assert!(
            error.contains("'server' is 257 bytes, more than the limit of 256"),
            "{error}"
        );
        assert!(
            error.contains("'cwd' is 4097 bytes, more than the limit of 4096"),
            "{error}"
        );
        assert!(
            !error.contains("'host'") && !error.contains("'command'"),
            "{error}"
        );
    }

    #[test]
    fn a_fitted_origin_passes_its_own_check() {
        let origin = Origin {
            server: Some("é".repeat(300)),
            command: Some("c".repeat(5000)),
            verified_exe: Some("/".repeat(5000)),
            verified_args: Some(vec!["a".repeat(3000), "b".repeat(3000)]),
            cwd: Some("/short".into()),
            ..Origin::default()
        }
        .fitted();
        assert_eq!(origin.check_sizes(), Ok(()));
        assert!(
            origin
                .server
                .as_deref()
                .is_some_and(|s| s.ends_with('…') && s.len() <= 256)
        );
        assert_eq!(origin.cwd.as_deref(), Some("/short"));
        assert_eq!(origin.verified_exe, None);
        assert_eq!(origin.verified_args.map(|a| a.len()), Some(1));
    }

    #[test]
    fn arguments_count_together() {
        let origin = Origin {
            verified_args: Some(vec!["a".repeat(2047), "b".repeat(2048)]),
            ..Origin::default()
        };
        let error = origin.check_sizes().expect_err("4097 with separators");
        assert!(error.contains("'verified-args' is 4097 bytes"), "{error}");
        assert_eq!(origin_field_limit("pid"), None);
        assert_eq!(origin_field_refusal("unknown", 1 << 20), None);
    }
}
