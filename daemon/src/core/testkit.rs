//! What the core's tests and the simulation share: a configuration, a
//! request, callers, and reading effects.

use std::sync::{Arc, OnceLock};

use elicit_proto::{Elicitation, Limits};

use super::state::Capabilities;
use super::{Call, Caller, Core, Effect, FrontendSpec, Reply, Write};
use crate::config::Config;
use crate::store::RequestText;

/// A form with one text field.
pub(crate) const FORM: &str = r#"{"message": "Name?", "requestedSchema": {"type": "object",
  "properties": {"name": {"type": "string"}}, "required": ["name"]}}"#;

/// A configuration with small limits, a 1 s grace and no idle exit
/// unless asked.
pub(crate) fn config() -> Config {
    let mut config = Config::default();
    config.broker.client_grace_ms = 1000;
    config.broker.default_timeout_secs = 0;
    config.broker.exit_on_idle_secs = 0;
    config.broker.forms_per_session = 8;
    config.broker.forms_total = 64;
    config.broker.sessions_per_connection = 4;
    config.history.max_records = usize::MAX;
    config
}

/// A core at time 0.
pub(crate) fn core(config: Config) -> Core {
    Core::new(config, ":1.0".into(), [7; 32], 0)
}

/// A caller named `name`.
pub(crate) fn caller(name: &str) -> Caller {
    Caller {
        name: name.to_owned(),
        uid: 1000,
        pid: Some(42),
        sandbox: None,
    }
}

/// The request, parsed once for every test and seed.
pub(crate) fn request() -> (Arc<Elicitation>, RequestText) {
    static PARSED: OnceLock<(Arc<Elicitation>, RequestText)> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            let parsed = Elicitation::parse_str(FORM, &Limits::default()).map(|r| Arc::new(r.without_raw()));
            match (parsed, RequestText::new(FORM)) {
                (Ok(request), Ok(text)) => (request, text),
                _ => panic!("the test form is valid"),
            }
        })
        .clone()
}

/// An `Elicit` call into `session`.
pub(crate) fn elicit(session: &str, sid: Option<&str>, timeout_secs: Option<u64>) -> Call {
    let (request, text) = request();
    Call::Elicit {
        session: session.to_owned(),
        request,
        text,
        options: super::ElicitOptions {
            timeout_secs,
            submission_id: sid.map(str::to_owned),
        },
        verdict: None,
    }
}

/// A front-end that renders everything.
pub(crate) fn frontend(name: &str) -> FrontendSpec {
    FrontendSpec {
        path: "/f".into(),
        name: Some(name.to_owned()),
        capabilities: Capabilities::from_names(None),
        priority: 0,
    }
}

/// The batches among `effects`: (batch, writes, lazy).
pub(crate) fn writes(effects: &[Effect]) -> Vec<(u64, Vec<Write>, bool)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write {
                batch, writes, lazy, ..
            } => Some((*batch, writes.clone(), *lazy)),
            _ => None,
        })
        .collect()
}

/// The reply to `call` among `effects`, if there is one.
pub(crate) fn reply(effects: &[Effect], call: u64) -> Option<Result<Reply, String>> {
    effects.iter().find_map(|e| match e {
        Effect::Reply { call: c, result } if *c == call => Some(match result {
            Ok(reply) => Ok(reply.clone()),
            Err(error) => Err(error.to_string()),
        }),
        _ => None,
    })
}

/// The form id at the end of a form path.
pub(crate) fn form_of(path: &str) -> Option<u64> {
    path.rsplit('/').next()?.parse().ok()
}
