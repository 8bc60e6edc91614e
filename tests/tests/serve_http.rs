//! `elicit serve --listen 127.0.0.1:PORT -- COMMAND` (issue 17): a loopback
//! Streamable HTTP endpoint in front of a stdio server, judged by the
//! conformance suite's server scenarios.
//!
//! The yardstick is tests/peers/python/conformance_server.py, which passes
//! every server scenario of 2025-06-18 and 2025-11-25 directly over its own
//! Streamable HTTP. Through `elicit serve`, in front of its stdio build or
//! of that same HTTP endpoint (`--upstream URL`), each scenario must score
//! exactly as it does directly. `--prefer host` lets the suite's client
//! answer the elicitations it declared it can render, as it does directly:
//! with the broker answering instead, the scenarios that inspect the
//! `elicitation/create` the client receives (sep1034, sep1330) could not
//! see it. server-everything, which is no reference server, is still the
//! server of the DNS-rebinding test below.

use elicit_tests::http::{
    Counts, Listening, conformance_server_over_http, conformance_server_over_stdio, serve, server_scenario,
    suite,
};
use elicit_tests::mcp::everything;
use elicit_tests::{Daemon, PrivateBus};

/// Scenarios whose checks differ by design through `elicit serve`, and
/// why; they must pass in full both ways rather than count the same.
const BY_DESIGN: &[(&str, &str)] = &[(
    "server-sse-polling",
    "the server closes its POST stream mid-call (SEP-1699) and the suite \
     checks it resumes; through elicit serve the client's stream stays open \
     (a stdio server has no stream to close, and the bridge resumes an \
     upstream's itself), so the response comes on it and there is no \
     resume to check: 2 checks instead of 3",
)];

/// The server scenarios of 2025-06-18 and 2025-11-25, as the pinned suite
/// lists them (`conformance list --server`: `  - NAME [VERSIONS]`).
async fn server_scenarios() -> Option<Vec<String>> {
    let run = suite(&["list", "--server"], &[]).await?;
    let names: Vec<String> = run
        .text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter(|l| l.contains("2025-06-18") || l.contains("2025-11-25"))
        .filter_map(|l| l.split(' ').next().map(str::to_owned))
        .collect();
    assert!(
        names.iter().any(|n| n == "server-initialize"),
        "the suite lists its server scenarios: {}",
        run.text
    );
    Some(names)
}

/// `elicit serve ARGS…` with a daemon behind it; the bus and daemon live
/// as long as the endpoint.
async fn served(args: &[String]) -> (PrivateBus, Daemon, Listening) {
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let served = serve(bus.address(), args).await;
    (bus, daemon, served)
}

/// `elicit serve` in front of server-everything's stdio build.
async fn served_everything() -> Option<(PrivateBus, Daemon, Listening)> {
    let mut args = vec!["--".to_owned()];
    args.extend(everything()?);
    Some(served(&args).await)
}

/// One scenario's run: its counts, failing if the suite printed none, and
/// the lines that say what went wrong.
async fn run(url: &str, scenario: &str) -> Option<(Counts, String)> {
    let run = server_scenario(url, scenario).await?;
    let counts = run
        .counts
        .unwrap_or_else(|| panic!("no summary for {scenario} against {url}:\n{}", run.text));
    Some((counts, run.failures()))
}

/// True when a run has checks and every one passed, with no warning.
fn clean(c: &Counts) -> bool {
    c.total > 0 && c.passed == c.total && c.failed == 0 && c.warnings == 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_scenarios_score_the_same_through_serve_as_directly() {
    let Some(scenarios) = server_scenarios().await else {
        return;
    };
    let Some(direct) = conformance_server_over_http().await else {
        return;
    };
    let Some(stdio) = conformance_server_over_stdio() else {
        return;
    };
    let prefer = ["--prefer".to_owned(), "host".to_owned()];
    let mut over_stdio = prefer.to_vec();
    over_stdio.push("--".into());
    over_stdio.extend(stdio);
    let mut over_url = prefer.to_vec();
    over_url.extend(["--upstream".to_owned(), direct.url.clone()]);
    let variants = [
        ("serve -- stdio", served(&over_stdio).await),
        ("serve --upstream", served(&over_url).await),
    ];
    let mut wrong = Vec::new();
    for scenario in &scenarios {
        let Some((want, why)) = run(&direct.url, scenario).await else {
            return;
        };
        if !clean(&want) {
            wrong.push(format!("--- {scenario} fails directly: {want:?}\n{why}"));
        }
        let by_design = BY_DESIGN.iter().find(|(s, _)| s == scenario);
        for (variant, (_bus, _daemon, endpoint)) in &variants {
            let Some((got, why)) = run(&endpoint.url, scenario).await else {
                return;
            };
            eprintln!("{scenario}: directly {want:?}, through {variant} {got:?}");
            let key = |c: &Counts| (c.passed, c.total, c.failed);
            let fine = match by_design {
                Some(_) => clean(&got),
                None => key(&got) == key(&want) && got.warnings == want.warnings,
            };
            if !fine {
                wrong.push(format!(
                    "--- {scenario}: directly {want:?}, through {variant} {got:?}\n{why}"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} runs fail or score differently through elicit serve \
         (by design, and only required to pass: {BY_DESIGN:?}):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_passes_dns_rebinding_protection() {
    let Some((_bus, _daemon, served)) = served_everything().await else {
        return;
    };
    let Some(run) = server_scenario(&served.url, "dns-rebinding-protection").await else {
        return;
    };
    assert!(
        run.passed(),
        "elicit serve must refuse foreign Host and Origin headers ({:?}):\n{}",
        run.counts,
        run.text
    );
}
