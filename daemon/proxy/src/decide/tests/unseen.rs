//! A form nobody shows: the host hears where to answer it, once it is
//! asked and only while it is.

use serde_json::json;

use super::*;

const WHY: &str = "elicitd has no display: neither DISPLAY nor WAYLAND_DISPLAY is set";

fn said(form: &str) -> String {
    format!(
        "elicit proxy: the server's form {form} waits in elicitd, but no front-end shows it ({WHY}). \
         Answer it in a terminal with `elicit-tui`, or with `elicit answer {form} --accept-file -` \
         (or --decline, --cancel); `elicit list` shows it"
    )
}

/// A 2025-06-18 host without elicitation, and the server's form asked;
/// then `more`.
fn asked(more: Vec<Step>) -> Vec<Step> {
    let mut steps = vec![
        Step::Host(request(
            json!(0),
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "headless", "version": "1"}}),
        )),
        Step::Server(request(json!(5), "elicitation/create", form())),
    ];
    steps.extend(more);
    steps
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "a waiting form nobody shows: the host is told where to answer",
            config: config(),
            setup: asked(vec![]),
            steps: vec![Step::Unseen(1, "12", WHY)],
            expect: vec![E::Say(said("12")), log(&said("12"))],
        },
        Row {
            name: "a host that asked for errors only hears it on standard error alone",
            config: config(),
            setup: asked(vec![Step::Host(request(
                json!(1),
                "logging/setLevel",
                json!({"level": "error"}),
            ))]),
            steps: vec![Step::Unseen(1, "12", WHY)],
            expect: vec![E::Say(said("12"))],
        },
        Row {
            name: "a form answered already: nothing is said",
            config: config(),
            setup: asked(vec![Step::Reply(1, accept())]),
            steps: vec![Step::Unseen(1, "12", WHY)],
            expect: vec![],
        },
    ]
}

#[test]
fn the_unseen_table() {
    assert_eq!(run(rows()), 3);
}
