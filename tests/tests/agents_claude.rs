//! Claude Code (`claude -p`) as its users run it, against a fake model on loopback
//! (tests/src/agents): forms answered, declined and cancelled, the host
//! killed or shut down mid-form, a run with no form, and over HTTP to
//! `elicit serve`.

use elicit_tests::agents::Agent;

elicit_tests::agent_cases!(Agent::Claude);
