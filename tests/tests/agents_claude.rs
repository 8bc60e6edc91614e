//! Claude Code (`claude -p`) as its users run it, against a fake model on loopback
//! (tests/src/agents): forms answered, declined and cancelled, the host
//! killed or shut down mid-form, a run with no form, and over HTTP to
//! `elicit serve`.

use elicit_tests::agents::Agent;
use elicit_tests::agents::cases::{self, Death};

const AGENT: Agent = Agent::Claude;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_accepted_reaches_the_server_and_the_model() {
    cases::answered(AGENT, "accept").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_declined_reaches_the_model_as_declined() {
    cases::answered(AGENT, "decline").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_cancelled_reaches_the_model_as_cancelled() {
    cases::answered(AGENT, "cancel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_killed_mid_form_withdraws_it_and_leaves_nothing() {
    cases::killed_mid_form(AGENT, Death::Killed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_own_shutdown_mid_form_withdraws_it_and_leaves_nothing() {
    cases::killed_mid_form(AGENT, Death::ShutDown).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_no_form_leaves_nothing() {
    cases::no_form(AGENT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_to_elicit_serve_a_form_reaches_the_model() {
    cases::over_http(AGENT).await;
}
