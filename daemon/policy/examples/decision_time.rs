//! How long a policy decision takes with the built-in rules: the median and
//! the 99th percentile of 1000 decisions, for a harmless form (every rule
//! runs and passes), a secret-asking form (declined) and a confirmation.
//!
//! `CARGO_TARGET_DIR=/work/target-policy cargo run --release -p elicitd-policy --example decision_time`

use std::time::{Duration, Instant};

use elicit_proto::dbus::Origin;
use elicit_proto::{Elicitation, Limits};
use elicitd_policy::Policy;
use serde_json::json;

const RUNS: usize = 1000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let policy = Policy::load(&[])?;
    let origin = Origin {
        host: Some("claude-code".into()),
        server: Some("deployer".into()),
        cwd: Some("/src/app".into()),
        ..Origin::default()
    };
    let limits = Limits::default();
    let harmless = Elicitation::from_value(
        json!({
            "message": "Where should this go?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Your name"},
                    "email": {"type": "string", "format": "email", "title": "Email"},
                    "environment": {"type": "string", "enum": ["staging", "production"]},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                    "max_tokens": {"type": "integer", "title": "Max tokens"},
                    "notes": {"type": "string", "description": "Anything the reviewers should know"},
                    "confirm": {"type": "boolean", "title": "Deploy now?"}
                },
                "required": ["name", "environment"]
            }
        }),
        &limits,
    )?;
    let secret = Elicitation::from_value(
        json!({
            "message": "Log in",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": {"type": "string"},
                    "password": {"type": "string", "title": "Password"}
                }
            }
        }),
        &limits,
    )?;
    let confirmation = Elicitation::from_value(
        json!({"message": "Proceed?", "requestedSchema": {"type": "object", "properties": {}}}),
        &limits,
    )?;
    for (label, request) in [
        ("harmless 7-field form", &harmless),
        ("password form", &secret),
        ("confirmation", &confirmation),
    ] {
        let mut times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                let decision = policy.decide(request, &origin, "session");
                let took = started.elapsed();
                std::hint::black_box(decision);
                took
            })
            .collect();
        times.sort();
        let decision = policy.decide(request, &origin, "session");
        println!(
            "{label:<22} median {:>9.1?}  p99 {:>9.1?}  ({} by {})",
            times[RUNS / 2],
            times[RUNS * 99 / 100],
            decision.verdict.name(),
            decision.decided_by
        );
    }
    Ok(())
}
