//! Bounds on the call arguments the broker keeps that `elicit_proto`'s
//! limits do not already cover (requests, answers and origins have theirs
//! there): a front-end's name and capabilities, a submission id. Each is
//! refused with its name, never cut.

use elicit_proto::Error;
use elicit_proto::dbus::{Dict, dict_str, dict_strings};

/// Bytes of a front-end's `name` option (shown in history and `elicit list`).
pub const MAX_FRONTEND_NAME_BYTES: usize = 256;

/// Entries of a front-end's `capabilities` option (there are a handful of
/// known ones; unknown ones are ignored, but must not be many).
pub const MAX_CAPABILITIES: usize = 64;

/// Bytes of an `Elicit` call's `submission-id` option, kept with the form.
pub const MAX_SUBMISSION_ID_BYTES: usize = 256;

/// Checks the options of `RegisterFrontend`, `OpenFrontend` and
/// `ResumeFrontend`.
pub fn check_frontend_options(options: &Dict) -> Result<(), Error> {
    if let Some(name) = dict_str(options, "name")
        && name.len() > MAX_FRONTEND_NAME_BYTES
    {
        return Err(Error::LimitExceeded(format!(
            "option 'name' is {} bytes, more than the limit of {MAX_FRONTEND_NAME_BYTES}",
            name.len()
        )));
    }
    if let Some(capabilities) = dict_strings(options, "capabilities")
        && capabilities.len() > MAX_CAPABILITIES
    {
        return Err(Error::LimitExceeded(format!(
            "option 'capabilities' has {} entries, more than the limit of {MAX_CAPABILITIES}",
            capabilities.len()
        )));
    }
    Ok(())
}

/// Checks an `Elicit` call's `submission-id`.
pub fn check_submission_id(id: Option<&str>) -> Result<(), Error> {
    match id {
        Some(id) if id.len() > MAX_SUBMISSION_ID_BYTES => Err(Error::LimitExceeded(format!(
            "option 'submission-id' is {} bytes, more than the limit of {MAX_SUBMISSION_ID_BYTES}",
            id.len()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::zvariant::OwnedValue;

    #[test]
    fn long_options_are_refused_by_name() {
        let mut options = Dict::new();
        options.insert(
            "name".into(),
            OwnedValue::from(zbus::zvariant::Str::from("n".repeat(256))),
        );
        assert!(check_frontend_options(&options).is_ok());
        options.insert(
            "name".into(),
            OwnedValue::from(zbus::zvariant::Str::from("n".repeat(257))),
        );
        let error = check_frontend_options(&options)
            .expect_err("too long")
            .to_string();
        assert!(error.contains("'name' is 257 bytes"), "{error}");
        assert!(check_submission_id(Some(&"i".repeat(256))).is_ok());
        let error = check_submission_id(Some(&"i".repeat(300)))
            .expect_err("too long")
            .to_string();
        assert!(error.contains("'submission-id' is 300 bytes"), "{error}");
    }
}
