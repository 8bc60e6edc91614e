//! URL mode: what to show so the user sees where a link really leads.

use std::fmt;

use elicit_i18n::{fill, tr};

use elicit_mcp::{Elicitation, Mode};

/// A URL split for display: the host is what the user must check, so a
/// front-end highlights it between the scheme and the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlView {
    /// The whole URL, exactly as it would be opened.
    pub full: String,
    /// What comes before the host: `https://`.
    pub before_host: String,
    /// The host as it will be contacted (IDNs in their `xn--` form).
    pub host: String,
    /// Port, path, query and fragment.
    pub after_host: String,
    /// The host in Unicode when it differs from `host` (an IDN).
    pub unicode_host: Option<String>,
    /// Reasons to look twice before opening.
    pub warnings: Vec<UrlWarning>,
}

/// A reason to look twice at a URL before opening it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlWarning {
    /// The host is an internationalised name, shown as `unicode`; it may
    /// imitate a familiar one.
    Punycode {
        /// The host in Unicode.
        unicode: String,
    },
    /// One label of the host mixes scripts, a classic look-alike trick
    /// (`pаypal` with a Cyrillic `а`).
    MixedScript {
        /// The label, in Unicode.
        label: String,
        /// The scripts found in it.
        scripts: Vec<&'static str>,
    },
    /// Plain http (proto allows it only to this machine).
    NotEncrypted,
    /// The host is a bare IP address, not a name.
    IpAddress,
}

impl fmt::Display for UrlWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlWarning::Punycode { unicode } => f.write_str(&fill(
                &tr("the host is an international name that reads as “{name}”"),
                &[("name", unicode)],
            )),
            // TRANSLATORS: {scripts} is a list of writing systems, such as "Latin and Cyrillic".
            UrlWarning::MixedScript { label, scripts } => f.write_str(&fill(
                &tr("“{label}” mixes {scripts} letters: it may imitate another name"),
                &[("label", label), ("scripts", &scripts.join(&tr(" and ")))],
            )),
            UrlWarning::NotEncrypted => f.write_str(&tr("the connection is not encrypted (http)")),
            UrlWarning::IpAddress => f.write_str(&tr("the host is a bare IP address")),
        }
    }
}

impl UrlView {
    /// The view of a URL-mode request; `None` in form mode.
    pub fn from_request(request: &Elicitation) -> Option<Self> {
        match &request.mode {
            Mode::Url { url, .. } => Some(UrlView::new(url)),
            Mode::Form(_) => None,
        }
    }

    /// The view of a parsed URL.
    pub fn new(url: &url::Url) -> Self {
        let full = url.as_str().to_owned();
        let host = url.host_str().unwrap_or_default().to_owned();
        let before = format!("{}://", url.scheme());
        // Proto refuses credentials before the host, so the serialised URL
        // is scheme, `://`, host, rest; anything else is shown unsplit.
        let (before_host, after_host) = match full.strip_prefix(&before).and_then(|r| r.strip_prefix(&host)) {
            Some(rest) if !host.is_empty() => (before, rest.to_owned()),
            _ => (String::new(), full.clone()),
        };
        let host = if before_host.is_empty() {
            String::new()
        } else {
            host
        };
        let mut warnings = Vec::new();
        if url.scheme() == "http" {
            warnings.push(UrlWarning::NotEncrypted);
        }
        let mut unicode_host = None;
        match url.host() {
            Some(url::Host::Domain(domain)) => {
                let unicode = url::quirks::domain_to_unicode(domain);
                if domain.split('.').any(|label| label.starts_with("xn--")) {
                    warnings.push(UrlWarning::Punycode {
                        unicode: unicode.clone(),
                    });
                }
                for label in unicode.split('.') {
                    let scripts = scripts_of(label);
                    if scripts.len() > 1 {
                        warnings.push(UrlWarning::MixedScript {
                            label: label.to_owned(),
                            scripts,
                        });
                    }
                }
                if unicode != domain {
                    unicode_host = Some(unicode);
                }
            }
            Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => warnings.push(UrlWarning::IpAddress),
            None => {}
        }
        UrlView {
            full,
            before_host,
            host,
            after_host,
            unicode_host,
            warnings,
        }
    }
}

/// The scripts of the letters in `label`, in order of appearance; digits,
/// hyphens and other common characters belong to none.
fn scripts_of(label: &str) -> Vec<&'static str> {
    let mut scripts = Vec::new();
    for script in label.chars().filter_map(script_of) {
        if !scripts.contains(&script) {
            scripts.push(script);
        }
    }
    scripts
}

/// A coarse script classification: enough to tell the look-alike scripts
/// apart (Latin, Greek, Cyrillic, Armenian, Cherokee…). Chinese, Japanese
/// and Korean mix their scripts legitimately, so they count as one.
fn script_of(c: char) -> Option<&'static str> {
    const TABLE: &[(u32, u32, &str)] = &[
        (0x0041, 0x005A, "Latin"),
        (0x0061, 0x007A, "Latin"),
        (0x00C0, 0x024F, "Latin"),
        (0x1E00, 0x1EFF, "Latin"),
        (0x0370, 0x03FF, "Greek"),
        (0x1F00, 0x1FFF, "Greek"),
        (0x0400, 0x052F, "Cyrillic"),
        (0x2DE0, 0x2DFF, "Cyrillic"),
        (0xA640, 0xA69F, "Cyrillic"),
        (0x0530, 0x058F, "Armenian"),
        (0x0590, 0x05FF, "Hebrew"),
        (0x0600, 0x06FF, "Arabic"),
        (0x0750, 0x077F, "Arabic"),
        (0x0900, 0x097F, "Devanagari"),
        (0x0E00, 0x0E7F, "Thai"),
        (0x10A0, 0x10FF, "Georgian"),
        (0x13A0, 0x13FF, "Cherokee"),
        (0x1100, 0x11FF, "CJK"),
        (0x2E80, 0x9FFF, "CJK"),
        (0xAC00, 0xD7AF, "CJK"),
        (0xF900, 0xFAFF, "CJK"),
        (0xFF00, 0xFFEF, "Fullwidth"),
    ];
    let code = u32::from(c);
    if c.is_ascii_digit() || c == '-' {
        return None;
    }
    Some(
        TABLE
            .iter()
            .find(|(low, high, _)| (*low..=*high).contains(&code))
            .map_or("other", |(_, _, name)| *name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str) -> UrlView {
        UrlView::new(&url::Url::parse(text).expect("test URL parses"))
    }

    #[test]
    fn splits_around_the_host() {
        let v = view("https://example.com:8443/oauth?x=1");
        assert_eq!(
            (v.before_host.as_str(), v.host.as_str(), v.after_host.as_str()),
            ("https://", "example.com", ":8443/oauth?x=1")
        );
        assert!(v.warnings.is_empty());
        assert_eq!(v.unicode_host, None);
    }

    #[test]
    fn warns_on_punycode_and_mixed_scripts() {
        // "pаypal" with a Cyrillic а.
        let v = view("https://p\u{0430}ypal.com/login");
        assert!(v.host.starts_with("xn--"), "{}", v.host);
        assert!(matches!(&v.warnings[0], UrlWarning::Punycode { unicode } if unicode == "p\u{0430}ypal.com"));
        assert!(
            matches!(&v.warnings[1], UrlWarning::MixedScript { scripts, .. } if scripts == &["Latin", "Cyrillic"])
        );
        let v = view("https://b\u{fc}cher.de/");
        assert_eq!(v.warnings.len(), 1, "{:?}", v.warnings);
    }

    #[test]
    fn warns_on_http_and_addresses() {
        let v = view("http://127.0.0.1:8080/cb");
        assert_eq!(v.warnings, vec![UrlWarning::NotEncrypted, UrlWarning::IpAddress]);
        assert_eq!(v.host, "127.0.0.1");
    }
}
