//! `elicit-bench`: elicitd's figures as ratios against floors measured in
//! the same run on the same machine (shared, noisy machines make absolute
//! figures meaningless).
//!
//! Build everything in release first, then run it from the same folder:
//! `cargo build --release --workspace --bins && target/release/elicit-bench`.
//! Arguments: an iteration count (default 400), then optionally the names
//! of the sections to run (`broker`, `broker-crash`, `proxy`, `scale`,
//! `idle`, `desktop`); `broker-crash` is `broker` with `[store] sync =
//! "process-crash"`, to weigh what the power-cut sync costs. It runs only
//! when named.

mod broker;
mod cpu;
mod desktop;
mod figure;
mod http;
mod idle;
mod procfs;
mod proxy;
mod scale;

use elicit_tests::PrivateBus;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let iterations: usize = args
        .next_if(|a| a.parse::<usize>().is_ok())
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let sections: Vec<String> = args.collect();
    let wanted = |name: &str| sections.is_empty() || sections.iter().any(|s| s == name);

    let mut rows = Vec::new();
    if wanted("broker") {
        let bus = PrivateBus::start();
        rows.extend(broker::rows(&bus, iterations, "full").await);
    }
    if sections.iter().any(|s| s == "broker-crash") {
        let bus = PrivateBus::start();
        rows.extend(broker::rows(&bus, iterations, "process-crash").await);
    }
    if wanted("proxy") {
        let bus = PrivateBus::start();
        rows.extend(proxy::rows(&bus, iterations).await);
    }
    if wanted("http") {
        let bus = PrivateBus::start();
        rows.extend(http::rows(&bus, iterations).await);
    }
    if wanted("scale") {
        let bus = PrivateBus::start();
        rows.extend(scale::rows(&bus).await);
    }
    if wanted("idle") {
        let bus = PrivateBus::start();
        rows.extend(idle::rows(&bus).await);
    }

    if wanted("desktop") {
        rows.extend(desktop::rows(iterations).await);
    }

    let report = figure::report(&rows);
    let path = std::env::var("ELICIT_BENCH_JSON").unwrap_or_else(|_| "elicit-bench.json".into());
    match std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap_or_default()) {
        Ok(()) => println!("\nwritten to {path}"),
        Err(error) => eprintln!("elicit-bench: cannot write {path}: {error}"),
    }
}
