//! Which host request a 2025-era `elicitation/create` serves, so that the
//! host's cancellation of that request withdraws its form.
//!
//! On stdio a server's request carries no link to the client request it
//! serves, except through task metadata. So the proxy attributes a form to
//! the task its `_meta` names (`io.modelcontextprotocol/related-task`), or
//! else to the host's requests in flight when the form came: it serves one
//! of them, the proxy cannot tell which. Once every one of them has ended
//! and the host cancelled at least one, nobody is left who could want the
//! answer, and the form is withdrawn. (A server that answers every call
//! itself while its form waits still wants the form: it asked outside the
//! calls' lifetimes, as a background job may.) A form asked outside any request belongs to
//! nobody: only the server's own cancellation (or the host leaving)
//! withdraws it. (In the 2026-07-28 era the form is part of the request's
//! own round, so no guess is needed.)

use std::collections::BTreeSet;

use serde_json::Value;

/// The `_meta` key that ties a message to a task (MCP 2025-11-25).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// What a server elicitation belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// One of the host requests in flight when the form was asked.
    Requests {
        /// Those still open (id keys): the set shrinks as they end.
        open: BTreeSet<String>,
        /// The host cancelled one of them.
        cancelled: bool,
    },
    /// A task, by id.
    Task(String),
}

/// The owner of an `elicitation/create` with `params`, asked while the
/// host requests `in_flight` (id keys) were open.
pub fn owner_of<'a>(params: &Value, in_flight: impl IntoIterator<Item = &'a String>) -> Option<Owner> {
    if let Some(task) = params
        .get("_meta")
        .and_then(|m| m.get(META_RELATED_TASK))
        .and_then(|t| t.get("taskId"))
        .and_then(Value::as_str)
    {
        return Some(Owner::Task(task.to_owned()));
    }
    let in_flight: BTreeSet<String> = in_flight.into_iter().cloned().collect();
    (!in_flight.is_empty()).then_some(Owner::Requests {
        open: in_flight,
        cancelled: false,
    })
}

impl Owner {
    /// The host request `key` ended, `cancelled` by the host or answered
    /// by the server: true when that leaves the form nobody to wait for
    /// (every possible owner ended, at least one of them cancelled).
    pub fn request_ended(&mut self, key: &str, by_host: bool) -> bool {
        match self {
            Owner::Requests { open, cancelled } => {
                if !open.remove(key) {
                    return false;
                }
                *cancelled |= by_host;
                open.is_empty() && *cancelled
            }
            Owner::Task(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    fn requests(ids: &[&str]) -> Option<Owner> {
        Some(Owner::Requests {
            open: ids.iter().map(|s| s.to_string()).collect(),
            cancelled: false,
        })
    }

    #[test]
    fn the_only_request_in_flight_owns_the_form() {
        let form = json!({"message": "Name?"});
        assert_eq!(owner_of(&form, &keys(&["7"])), requests(&["7"]));
    }

    #[test]
    fn several_requests_in_flight_each_may_own_the_form() {
        let form = json!({"message": "Name?"});
        assert_eq!(owner_of(&form, &keys(&["7", "8"])), requests(&["7", "8"]));
        assert_eq!(owner_of(&form, &keys(&[])), None, "asked outside any request");
    }

    #[test]
    fn the_form_is_orphaned_only_when_its_last_possible_owner_ends() {
        let Some(mut owner) = requests(&["7", "8"]) else {
            unreachable!()
        };
        assert!(!owner.request_ended("9", true), "not one of them");
        assert!(!owner.request_ended("7", true), "8 may still want it");
        assert!(!owner.request_ended("7", true), "7 ended already");
        assert!(owner.request_ended("8", false), "answered last, 7 was cancelled");
        assert!(!Owner::Task("t".into()).request_ended("8", true));
    }

    #[test]
    fn a_form_whose_requests_were_all_answered_is_still_the_servers() {
        let Some(mut owner) = requests(&["7", "8"]) else {
            unreachable!()
        };
        assert!(!owner.request_ended("7", false));
        assert!(
            !owner.request_ended("8", false),
            "the server answered both itself"
        );
    }

    #[test]
    fn related_task_metadata_names_the_owner_whatever_is_in_flight() {
        let form = json!({"message": "Name?", "_meta": {META_RELATED_TASK: {"taskId": "t-1"}}});
        assert_eq!(
            owner_of(&form, &keys(&["7", "8"])),
            Some(Owner::Task("t-1".into()))
        );
        assert_eq!(owner_of(&form, &keys(&["7"])), Some(Owner::Task("t-1".into())));
        let malformed = json!({"message": "Name?", "_meta": {META_RELATED_TASK: {"taskId": 5}}});
        assert_eq!(owner_of(&malformed, &keys(&["7"])), requests(&["7"]));
    }
}
