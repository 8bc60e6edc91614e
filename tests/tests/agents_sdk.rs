//! The TypeScript SDK's `Client` (tests/peers/node/sdk_host.mjs) as its users run it, against a fake model on loopback
//! (tests/src/agents): forms answered, declined and cancelled, the host
//! killed or shut down mid-form, a run with no form, and over HTTP to
//! `elicit serve`. The SDK's request timeout cancels the call: the form is withdrawn and the keep-alive stops.

use elicit_tests::agents::Agent;

elicit_tests::agent_cases!(Agent::Sdk, with_host_cancel);
