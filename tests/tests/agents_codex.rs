//! Codex (`codex exec`) as its users run it, against a fake model on loopback
//! (tests/src/agents): forms answered, declined and cancelled, the host
//! killed or shut down mid-form, a run with no form, and over HTTP to
//! `elicit serve`. Codex's `tool_timeout_sec` cancels the call: the form is withdrawn.

use elicit_tests::agents::Agent;

elicit_tests::agent_cases!(Agent::Codex, with_host_cancel);
