//! The model's behaviour a front-end relies on: focus, when errors show,
//! choices, the daemon's errors, and what is sent.

use elicit_form::{FormModel, Input};
use elicit_mcp::{Elicitation, ElicitationAction, FieldError, Limits};
use serde_json::json;

fn model(schema: serde_json::Value) -> FormModel {
    let request = Elicitation::from_value(
        json!({"message": "m", "requestedSchema": schema}),
        &Limits::default(),
    )
    .expect("a valid request");
    FormModel::from_request(&request).expect("form mode")
}

fn contact() -> FormModel {
    model(json!({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "size": {"type": "string", "enum": ["s", "m", "l"]},
        "tier": {"type": "string", "enum": ["free", "pro"], "default": "pro"}
    }, "required": ["name", "tier"]}))
}

#[test]
fn errors_show_after_leaving_a_field_not_while_typing() {
    let mut m = contact();
    assert!(!m.is_valid(), "name is required");
    assert_eq!(m.visible_error(0), None);
    m.edit_text(0, |t| t.insert('A'));
    assert_eq!(
        m.field(0).and_then(|f| f.error()),
        Some("must be at least 2 characters long")
    );
    assert_eq!(m.visible_error(0), None, "still typing");
    m.focus_next();
    assert_eq!(m.visible_error(0), Some("must be at least 2 characters long"));
    m.set_focus(0);
    m.edit_text(0, |t| t.insert('n'));
    assert_eq!(m.visible_error(0), None, "fixed errors vanish at once");
    assert!(m.is_valid());
}

#[test]
fn submit_shows_every_error_and_focuses_the_first() {
    let mut m = contact();
    m.set_focus(3);
    let errors = m.submit().expect_err("name is missing");
    assert_eq!(
        errors,
        vec![FieldError {
            field: "name".into(),
            message: "is required".into()
        }]
    );
    assert_eq!(m.focus(), 0);
    assert_eq!(m.visible_error(0), Some("is required"));
    m.set_text(0, "Ann");
    let answer = m.submit().expect("valid");
    assert_eq!(answer.action, ElicitationAction::Accept);
    assert_eq!(answer.content, Some(json!({"name": "Ann", "tier": "pro"})));
}

#[test]
fn optional_choices_pass_through_none_and_required_ones_do_not() {
    let mut m = contact();
    m.step_choice(2, 1);
    assert_eq!(
        m.field(2).map(|f| f.input().clone()),
        Some(Input::Choice(Some(0)))
    );
    m.step_choice(2, -1);
    assert_eq!(m.field(2).map(|f| f.input().clone()), Some(Input::Choice(None)));
    m.step_choice(2, -1);
    assert_eq!(
        m.field(2).map(|f| f.input().clone()),
        Some(Input::Choice(Some(2)))
    );
    // tier is required: free <-> pro, never none.
    m.step_choice(3, 1);
    assert_eq!(
        m.field(3).map(|f| f.input().clone()),
        Some(Input::Choice(Some(0)))
    );
    m.step_choice(3, 1);
    assert_eq!(
        m.field(3).map(|f| f.input().clone()),
        Some(Input::Choice(Some(1)))
    );
    assert!(!m.select(3, Some(7)), "no such choice");
}

#[test]
fn the_daemons_errors_stay_until_their_field_is_edited() {
    let mut m = contact();
    m.set_text(0, "Ann");
    m.set_text(1, "ann@example.com");
    m.apply_server_errors(&elicit_form::parse_field_errors(
        r#"[{"field":"email","message":"is unknown here"},{"field":"","message":"try later"}]"#,
    ));
    assert_eq!(m.focus(), 1);
    assert_eq!(m.visible_error(1), Some("is unknown here"));
    assert_eq!(m.form_errors(), vec!["answer: try later".to_owned()]);
    assert!(!m.is_valid() && m.submit().is_err());
    m.edit_text(1, |t| t.backspace());
    assert_eq!(m.visible_error(1), None);
    assert!(m.form_errors().is_empty());
    assert!(m.submit().is_ok());
}

#[test]
fn multi_selects_track_answered_and_the_cursor() {
    let mut m = model(json!({"type": "object", "properties": {
        "tags": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["a", "b", "c"]}}
    }}));
    assert_eq!(m.content(), serde_json::Map::new(), "untouched: no answer");
    m.move_item_cursor(0, 5);
    m.toggle_item_at_cursor(0);
    assert_eq!(m.content().get("tags"), Some(&json!(["c"])));
    m.toggle_item(0, 2);
    assert_eq!(
        m.content().get("tags"),
        Some(&json!([])),
        "an empty list is an answer"
    );
    assert_eq!(
        m.field(0).and_then(|f| f.error()),
        Some("needs at least 1 choice")
    );
    m.clear(0);
    assert!(m.is_valid(), "cleared: no answer again");
}

#[test]
fn values_the_input_cannot_hold_are_refused_with_the_daemons_words() {
    let mut m = contact();
    let refused = m
        .set_value("name", &json!(7))
        .expect_err("a number in a text field");
    assert_eq!(refused.message, "must be text, not a number");
    assert_eq!(m.visible_error(0), Some("must be text, not a number"));
    assert!(m.set_value("size", &json!("xl")).is_err());
    assert_eq!(
        m.set_value("ssn", &json!("1")).map_err(|e| e.message),
        Err("was not asked for".into())
    );
    m.set_value("name", &json!("Ann")).expect("text fits");
    assert_eq!(m.visible_error(0), None);
}

#[test]
fn decline_and_cancel_carry_nothing() {
    assert_eq!(FormModel::decline().content, None);
    assert_eq!(FormModel::cancel().action, ElicitationAction::Cancel);
}
