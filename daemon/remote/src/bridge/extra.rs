//! The user's extra headers: `--header 'Name: value'`, a file of such
//! lines, or `--header-env Name=VAR` so that a token never sits in argv.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// An extra header that cannot be used; the text names which and why.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// Not `Name: value`.
    #[error("`{0}` is not a header: write it `Name: value`")]
    Shape(String),
    /// Not a valid header name.
    #[error("`{0}` is not a valid header name")]
    Name(String),
    /// Not a valid header value (control characters, say).
    #[error("the value of header `{0}` is not a valid header value")]
    Value(String),
    /// The header file could not be read.
    #[error("cannot read the header file {path}: {source}")]
    File {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--header-env` not `Name=VAR`, or VAR unset.
    #[error("--header-env `{0}`: write it `Name=VARIABLE`, with VARIABLE set")]
    Env(String),
}

/// Adds `Name: value` to `headers`. Credentials are marked sensitive so
/// that no debug output of a request shows them.
pub fn add(headers: &mut HeaderMap, line: &str) -> Result<(), HeaderError> {
    let (name, value) = line
        .split_once(':')
        .ok_or_else(|| HeaderError::Shape(shape_of(line)))?;
    insert(headers, name.trim(), value.trim())
}

/// Adds every `Name: value` line of `text` (a header file); blank lines
/// and lines starting with `#` are skipped.
pub fn add_file(headers: &mut HeaderMap, path: &str) -> Result<(), HeaderError> {
    let text = std::fs::read_to_string(path).map_err(|source| HeaderError::File {
        path: path.to_owned(),
        source,
    })?;
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .try_for_each(|line| add(headers, line))
}

/// Adds `Name` with the value of the environment variable `VAR`, from
/// `Name=VAR`.
pub fn add_env(headers: &mut HeaderMap, spec: &str) -> Result<(), HeaderError> {
    let (name, variable) = spec
        .split_once('=')
        .ok_or_else(|| HeaderError::Env(spec.to_owned()))?;
    let value = std::env::var(variable.trim()).map_err(|_| HeaderError::Env(spec.to_owned()))?;
    insert(headers, name.trim(), value.trim())
}

fn insert(headers: &mut HeaderMap, name: &str, value: &str) -> Result<(), HeaderError> {
    let header = HeaderName::try_from(name).map_err(|_| HeaderError::Name(name.to_owned()))?;
    let mut value = HeaderValue::try_from(value).map_err(|_| HeaderError::Value(name.to_owned()))?;
    value.set_sensitive(is_credential(&header));
    headers.append(header, value);
    Ok(())
}

fn is_credential(name: &HeaderName) -> bool {
    let name = name.as_str();
    name == "authorization" || name == "cookie" || name.contains("token") || name.contains("key")
}

/// What the user wrote, without its value: an error message must not echo
/// a token the user pasted in the wrong shape.
fn shape_of(line: &str) -> String {
    let shown: String = line.chars().take(24).collect();
    if line.chars().count() > 24 {
        format!("{shown}…")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_line_is_name_colon_value() {
        let mut headers = HeaderMap::new();
        add(&mut headers, "X-Team:  blue ").unwrap();
        assert_eq!(headers["x-team"], "blue");
        assert!(matches!(
            add(&mut headers, "no colon"),
            Err(HeaderError::Shape(_))
        ));
        assert!(matches!(
            add(&mut headers, "bad name: v"),
            Err(HeaderError::Name(_))
        ));
        assert!(matches!(
            add(&mut headers, "X-Bad: a\u{7}b"),
            Err(HeaderError::Value(_))
        ));
    }

    #[test]
    fn credentials_are_sensitive_and_never_echoed() {
        let mut headers = HeaderMap::new();
        add(&mut headers, "Authorization: Bearer s3cret").unwrap();
        assert!(headers["authorization"].is_sensitive());
        let error = add(&mut headers, "Bearer s3cret-token-that-is-long-enough").unwrap_err();
        assert!(!error.to_string().contains("long-enough"), "{error}");
    }

    #[test]
    fn a_header_file_skips_comments_and_blank_lines() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "# team\n\nX-Team: blue\nX-Env: prod\n").unwrap();
        let mut headers = HeaderMap::new();
        add_file(&mut headers, &file.path().display().to_string()).unwrap();
        assert_eq!(headers.len(), 2);
    }
}
