//! The per-session backlog: how many forms wait behind the presented one.

use std::collections::HashMap;

use elicit_proto::dbus::{Broker1Proxy, FormChangedStream, list_all_forms};
use futures_util::{FutureExt, StreamExt};

use crate::Observer;

/// Queued (not presented) forms per session, from `ListForms` JSON;
/// anything unreadable counts as nothing queued.
pub fn backlog(list_forms_json: &str) -> HashMap<String, usize> {
    let forms: Vec<serde_json::Value> = serde_json::from_str(list_forms_json).unwrap_or_default();
    let mut counts = HashMap::new();
    count_queued(&forms, &mut counts);
    counts
}

/// Adds the queued forms among `forms` to `counts`, per session.
fn count_queued(forms: &[serde_json::Value], counts: &mut HashMap<String, usize>) {
    for form in forms {
        if form["state"] == "queued"
            && let Some(session) = form["session"].as_str()
        {
            *counts.entry(session.to_owned()).or_insert(0) += 1;
        }
    }
}

/// Keeps the backlog current: every `FormChanged` may change it, and a
/// burst of them is answered with one listing, in brief pages
/// (`ListFormsPage`): whatever is queued, no reply nears the bus's limit.
pub(crate) async fn watch(
    broker: Broker1Proxy<'static>,
    mut changes: FormChangedStream,
    observer: std::sync::Arc<dyn Observer>,
) {
    while changes.next().await.is_some() {
        while let Some(Some(_)) = changes.next().now_or_never() {}
        let mut counts = HashMap::new();
        let count = |page: &str| {
            let forms: Vec<serde_json::Value> = serde_json::from_str(page).unwrap_or_default();
            count_queued(&forms, &mut counts);
        };
        if list_all_forms(&broker, true, count).await.is_err() {
            continue;
        }
        observer.backlog(counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_counts_queued_forms_per_session() {
        let json = r#"[{"session":"a","state":"queued"},{"session":"a","state":"presented"},
            {"session":"a","state":"queued"},{"session":"b","state":"queued"}]"#;
        let counts = backlog(json);
        assert_eq!((counts.get("a"), counts.get("b")), (Some(&2), Some(&1)));
        assert!(backlog("not json").is_empty());
    }
}
