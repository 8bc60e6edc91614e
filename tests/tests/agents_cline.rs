//! Cline as its users run it, against a fake model's Chat Completions on
//! loopback (tests/src/agents): forms answered, declined and cancelled, the
//! host killed, shut down or sent Ctrl-C mid-form, a run with no form, over HTTP to
//! `elicit serve`, and the host giving up on its call.

use elicit_tests::agents::Agent;

elicit_tests::agent_cases!(Agent::Cline, chat);
