//! `ListForms` and `ListFormsPage`: the pending forms, described, never
//! any answer content.
//!
//! A form's entry may be a few hundred kilobytes (its message and field
//! names), so a whole list may not fit one D-Bus message (128 MiB at most,
//! and the bus may allow less): 540 large forms once made `ListForms`
//! fail with "excess data" and cost the daemon 400 MiB to build. Pages
//! stop at [`PAGE_BYTES`]; `ListForms`, kept for older callers, refuses
//! past [`LIST_BYTES`] with an error that names the paged call.

use serde_json::Value;

use super::state::Form;
use super::{Caller, Core, Reply};
use elicit_proto::Error;

/// Bytes of JSON one `ListFormsPage` reply carries before it stops (it
/// always carries at least one form, which the request limits bound).
pub const PAGE_BYTES: usize = 1 << 20;

/// Bytes of JSON `ListForms` carries at most, far under the bus's limit.
pub const LIST_BYTES: usize = 16 << 20;

/// One page of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// A JSON array of form entries, in id order.
    pub json: String,
    /// Whether forms with higher ids follow (ask again after the last id).
    pub more: bool,
}

impl Core {
    /// `ListForms`: every pending form, or an error past [`LIST_BYTES`].
    pub(super) fn list_forms(&self, now: u64, caller: &Caller) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("list forms")?;
        let page = self.page(now, None, false, LIST_BYTES);
        if page.more {
            return Err(Error::LimitExceeded(format!(
                "the pending forms take more than {LIST_BYTES} bytes to list; ListFormsPage lists them in pages"
            )));
        }
        Ok(Some(Reply::Json(page.json)))
    }

    /// `ListFormsPage`: the forms after id `after` (all with `None`), up to
    /// about [`PAGE_BYTES`]; `brief` leaves out messages and field names.
    pub(super) fn list_forms_page(
        &self,
        now: u64,
        caller: &Caller,
        after: Option<u64>,
        brief: bool,
    ) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("list forms")?;
        Ok(Some(Reply::Page(self.page(now, after, brief, PAGE_BYTES))))
    }

    /// The ready forms after `after`, in id order, while they fit `bytes`.
    pub(super) fn page(&self, now: u64, after: Option<u64>, brief: bool, bytes: usize) -> Page {
        let mut json = String::from("[");
        let mut more = false;
        // A form still being stored has not been accepted yet.
        for form in self.state.forms_after(after).filter(|form| form.ready) {
            let entry = self.entry(now, form, brief).to_string();
            if json.len() > 1 && json.len() + entry.len() + 2 > bytes {
                more = true;
                break;
            }
            if json.len() > 1 {
                json.push(',');
            }
            json.push_str(&entry);
        }
        json.push(']');
        Page { json, more }
    }

    fn entry(&self, now: u64, form: &Form, brief: bool) -> Value {
        let record = &form.record;
        let origin = self
            .state
            .session(&record.session)
            .map(|s| s.record.origin.clone());
        let mut entry = serde_json::json!({
            "id": record.id,
            "session": record.session,
            "origin": origin,
            "state": record.state.name(),
            "mode": form.request.mode_name(),
            "presented-to": form.presenter.as_ref().map(|p| p.label.clone()),
            "age-ms": now.saturating_sub(record.created_ms),
        });
        if !brief {
            let fields: Vec<&str> = form
                .request
                .form()
                .map(|f| f.fields.iter().map(|f| f.name.as_str()).collect())
                .unwrap_or_default();
            entry["message"] = Value::from(form.request.message.as_str());
            entry["fields"] = Value::from(fields);
        }
        entry
    }
}
