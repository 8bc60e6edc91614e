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
        "server" | "host" | "server-version" | "host-version" | "icon" => Some(MAX_ORIGIN_NAME_BYTES),
        "command" | "cwd" | "verified-exe" | "verified-args" => Some(MAX_ORIGIN_PATH_BYTES),
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
        assert!(error.contains("'server' is 257 bytes, more than the limit of 256"), "{error}");
        assert!(error.contains("'cwd' is 4097 bytes, more than the limit of 4096"), "{error}");
        assert!(!error.contains("'host'") && !error.contains("'command'"), "{error}");
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
