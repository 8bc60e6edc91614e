//! Which host request a 2025-era `elicitation/create` serves, so that the
//! host's cancellation of that request withdraws its form.
//!
//! On stdio a server's request carries no link to the client request it
//! serves, except through task metadata. So the proxy attributes a form
//! only where it is sure: to the task its `_meta` names
//! (`io.modelcontextprotocol/related-task`), or to the host's only request
//! in flight when the form came. A form asked while several requests were
//! in flight belongs to none of them: only the server's own cancellation
//! (or the host leaving) withdraws it. (In the 2026-07-28 era the form is
//! part of the request's own round, so no guess is needed.)

use serde_json::Value;

/// The `_meta` key that ties a message to a task (MCP 2025-11-25).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// What a server elicitation belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// A host request, by id key.
    Request(String),
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
    let mut in_flight = in_flight.into_iter();
    match (in_flight.next(), in_flight.next()) {
        (Some(only), None) => Some(Owner::Request(only.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_only_request_in_flight_owns_the_form() {
        let form = json!({"message": "Name?"});
        assert_eq!(owner_of(&form, &keys(&["7"])), Some(Owner::Request("7".into())));
    }

    #[test]
    fn several_requests_in_flight_leave_the_form_unowned() {
        let form = json!({"message": "Name?"});
        assert_eq!(owner_of(&form, &keys(&["7", "8"])), None);
        assert_eq!(owner_of(&form, &keys(&[])), None, "asked outside any request");
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
        assert_eq!(
            owner_of(&malformed, &keys(&["7"])),
            Some(Owner::Request("7".into()))
        );
    }
}
