//! Reading a JSON document from a file or standard input, within a size cap.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::{Context, bail};

/// Reads `path` (`-` for standard input) as UTF-8 text of at most `limit`
/// bytes. A larger file is refused from its metadata, before it is read;
/// standard input is read only up to one byte past the cap.
pub fn read_capped(path: &Path, limit: usize) -> anyhow::Result<String> {
    let (name, reader): (String, Box<dyn Read>) = if path == Path::new("-") {
        ("standard input".into(), Box::new(io::stdin().lock()))
    } else {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let size = file
            .metadata()
            .with_context(|| format!("cannot stat {}", path.display()))?
            .len();
        if size > limit as u64 {
            bail!(
                "{} is {size} bytes, more than the limit of {limit}",
                path.display()
            );
        }
        (path.display().to_string(), Box::new(file))
    };
    let mut bytes = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {name}"))?;
    if bytes.len() > limit {
        bail!("{name} is more than the limit of {limit} bytes");
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        bail!("{name} is empty");
    }
    String::from_utf8(bytes).with_context(|| format!("{name} is not UTF-8 text"))
}

/// Standard output gathered and written once, so that a closed pipe
/// (`elicit check … | head`) ends the output quietly instead of panicking.
#[derive(Debug, Default)]
pub struct Output(String);

impl Output {
    /// Appends one line of text for people, its control characters
    /// escaped (see [`elicit_proto::text::escape_controls`]).
    pub fn line(&mut self, line: std::fmt::Arguments<'_>) {
        let line = elicit_proto::text::escape_controls(&line.to_string()).into_owned();
        self.0.push_str(&line);
        self.0.push('\n');
    }

    /// Appends one JSON document as a line, its strings made safe for a
    /// terminal (see [`elicit_proto::text::json_safe`]).
    pub fn json(&mut self, document: &serde_json::Value) {
        let text = document.to_string();
        self.0.push_str(&elicit_proto::text::json_safe(&text));
        self.0.push('\n');
    }

    /// Writes everything gathered; a reader that went away is not an error.
    pub fn flush(self) {
        let _ = io::stdout().lock().write_all(self.0.as_bytes());
    }
}

/// `println!` into an [`Output`].
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => { $out.line(format_args!($($arg)*)) };
}
pub(crate) use outln;
