//! Issue 39: a front-end showing pattern-heavy forms holds what their text
//! says. `elicit-tui` showing six forms of 64 `.{750}` patterns grew from
//! 9 to 413 MiB, because reading a shown request compiled every pattern
//! again and kept the programs; the broker checked them already, so a
//! front-end now reads the request without compiling anything.

use std::time::{Duration, Instant};

use elicit_form::{Body, read_request};

fn pattern_form(pattern: &str) -> String {
    let properties: Vec<String> = (0..64)
        .map(|i| format!(r#""f{i}": {{"type": "string", "pattern": "{pattern}"}}"#))
        .collect();
    format!(
        r#"{{"message": "m", "requestedSchema": {{"type": "object", "properties": {{{}}}}}}}"#,
        properties.join(",")
    )
}

#[test]
fn reading_shown_pattern_heavy_forms_compiles_nothing() {
    // Compiling 64 programs of a megabyte takes seconds in a debug build
    // (0.3 s in a release one); reading six such forms takes milliseconds.
    let started = Instant::now();
    for pattern in [".{750}", "^.{1,150}$"] {
        let request = pattern_form(pattern);
        for _ in 0..6 {
            let (message, body) = read_request(&request);
            assert_eq!(message, "m");
            assert!(matches!(body, Body::Form(_)), "{pattern}: {body:?}");
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
