//! `elicit serve --listen 127.0.0.1:PORT -- COMMAND` (issue 17): a loopback
//! Streamable HTTP endpoint in front of a stdio server, judged by the
//! conformance suite's server scenarios.
//!
//! server-everything is not the suite's reference server (many scenarios
//! ask for tools it lacks), so the yardstick is server-everything's own
//! `streamableHttp` transport: through `elicit serve`, its stdio build must
//! score exactly as well, scenario by scenario. DNS-rebinding protection,
//! which server-everything lacks (it allows any origin), must pass in full.

use elicit_tests::http::{Counts, everything_over_http, serve, server_scenario, suite};
use elicit_tests::mcp::everything;
use elicit_tests::{Daemon, PrivateBus};

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

/// `elicit serve` in front of server-everything's stdio build, with a
/// daemon behind it; the bus and daemon live as long as the endpoint.
async fn served_everything() -> Option<(PrivateBus, Daemon, elicit_tests::http::Listening)> {
    let mut args = vec!["--".to_owned()];
    args.extend(everything()?);
    let bus = PrivateBus::start();
    let daemon = Daemon::start(&bus, "").await;
    let served = serve(bus.address(), &args).await;
    Some((bus, daemon, served))
}

/// A run's counts, failing if the suite printed none.
fn counted(scenario: &str, url: &str, counts: Option<Counts>, text: &str) -> (u32, u32, u32) {
    let c = counts.unwrap_or_else(|| panic!("no summary for {scenario} against {url}:\n{text}"));
    (c.passed, c.total, c.failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_scenarios_score_the_same_through_serve_as_directly() {
    let Some(scenarios) = server_scenarios().await else {
        return;
    };
    let Some(direct) = everything_over_http().await else {
        return;
    };
    let Some((_bus, _daemon, served)) = served_everything().await else {
        return;
    };
    let mut different = Vec::new();
    // dns-rebinding-protection has its own test: server-everything fails it.
    for scenario in scenarios.iter().filter(|s| *s != "dns-rebinding-protection") {
        let Some(want) = server_scenario(&direct.url, scenario).await else {
            return;
        };
        let Some(got) = server_scenario(&served.url, scenario).await else {
            return;
        };
        let want_counts = counted(scenario, &direct.url, want.counts, &want.text);
        let got_counts = counted(scenario, &served.url, got.counts, &got.text);
        eprintln!("{scenario}: direct {want_counts:?}, through elicit serve {got_counts:?}");
        if want_counts != got_counts {
            different.push(format!(
                "--- {scenario}: (passed, total, failed) directly {want_counts:?}, through elicit serve {got_counts:?}\n{}",
                got.failures()
            ));
        }
    }
    assert!(
        different.is_empty(),
        "{} server scenarios score differently through elicit serve:\n{}",
        different.len(),
        different.join("\n")
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
