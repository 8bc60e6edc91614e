//! The daemon's per-field errors, as they arrive over D-Bus.

use elicit_mcp::FieldError;

/// Reads the text of a `dev.elicitd.Error.InvalidAnswer` reply: a JSON
/// array of `{"field", "message"}` objects. Text that is not such an array
/// (an older or foreign daemon) becomes one error on the answer as a whole,
/// so the user still sees why the answer was refused.
pub fn parse_field_errors(text: &str) -> Vec<FieldError> {
    match serde_json::from_str::<Vec<FieldError>>(text) {
        Ok(errors) if !errors.is_empty() => errors,
        _ => vec![FieldError {
            field: String::new(),
            message: text.trim().to_owned(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_an_array_and_falls_back_to_the_text() {
        let errors = parse_field_errors(r#"[{"field":"email","message":"is required"}]"#);
        assert_eq!(errors[0].field, "email");
        let errors = parse_field_errors("the server is gone");
        assert_eq!(
            (errors[0].field.as_str(), errors[0].message.as_str()),
            ("", "the server is gone")
        );
    }
}
