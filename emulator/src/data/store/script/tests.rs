//! The checks of a script's body (`script.rs`).

use super::*;
use serde_json::json;

fn parsed(kind: ScriptKind, body: Value) -> ApiResult<Parsed> {
    parse(kind, body.as_object().unwrap())
}

fn message(kind: ScriptKind, body: Value) -> String {
    match parsed(kind, body) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.message,
    }
}

#[test]
fn missing_properties_are_listed_in_the_services_words_and_order() {
    let t = ScriptKind::Trigger;
    assert!(message(ScriptKind::StoredProcedure, json!({"id": "s"}))
        .contains("the required properties - 'body; ' - are missing"));
    assert!(message(
        t,
        json!({"id": "t", "body": "x", "triggerOperation": "All"})
    )
    .contains("- 'triggerType; ' -"));
    assert!(
        message(t, json!({"id": "t", "body": "x", "triggerType": "Pre"}))
            .contains("- 'triggerOperation; ' -")
    );
    assert!(message(t, json!({"id": "t", "triggerOperation": "all"}))
        .contains("- 'body; triggerType; ' -"));
    assert!(message(t, json!({})).contains("- 'id; body; triggerType; triggerOperation; ' -"));
    // null is missing too.
    assert!(message(
        ScriptKind::UserDefinedFunction,
        json!({"id": "u", "body": null})
    )
    .contains("- 'body; ' -"));
}

#[test]
fn trigger_enums_are_read_in_any_case_and_kept_as_sent() {
    let p = parsed(
        ScriptKind::Trigger,
        json!({"id": "t", "body": "x", "triggerType": "pre", "triggerOperation": "UPSERT"}),
    )
    .unwrap();
    assert_eq!(
        p.trigger,
        Some((TriggerType::Pre, TriggerOperation::Upsert))
    );
    assert_eq!(p.trigger_as_sent, Some(("pre".into(), "UPSERT".into())));
    let m = message(
        ScriptKind::Trigger,
        json!({"id": "t", "body": "x", "triggerType": "during", "triggerOperation": "All"}),
    );
    assert!(m.contains("'triggerType' must be one of Pre, Post"), "{m}");
    let m = message(
        ScriptKind::Trigger,
        json!({"id": "t", "body": "x", "triggerType": "Post", "triggerOperation": 3}),
    );
    assert!(
        m.contains("'triggerOperation' must be one of All, Create, Replace, Delete, Upsert"),
        "{m}"
    );
}

#[test]
fn a_body_is_a_string_kept_verbatim_and_other_kinds_ignore_trigger_fields() {
    let m = message(ScriptKind::StoredProcedure, json!({"id": "s", "body": 12}));
    assert!(m.contains("'body' must be a string"), "{m}");
    let p = parsed(
        ScriptKind::StoredProcedure,
        json!({"id": "s", "body": "not JS at all \u{2028} ☃", "triggerType": "nonsense"}),
    )
    .unwrap();
    assert_eq!(p.body, "not JS at all \u{2028} ☃");
    assert!(p.trigger.is_none() && p.trigger_as_sent.is_none());
    assert!(parsed(
        ScriptKind::StoredProcedure,
        json!({"id": "a/b", "body": ""})
    )
    .is_err());
}

#[test]
fn numbers_only_grow() {
    let mut scripts = Scripts::default();
    assert!(scripts.is_empty());
    assert_eq!(scripts.next_number(ScriptKind::Trigger), 1);
    assert_eq!(scripts.next_number(ScriptKind::Trigger), 2);
    assert_eq!(scripts.next_number(ScriptKind::StoredProcedure), 1);
    assert!(!scripts.is_empty());
    let mut restored = Scripts::default();
    restored.keep_numbers_growing(&scripts);
    assert_eq!(restored.next_number(ScriptKind::Trigger), 3);
    assert_eq!(restored.next_number(ScriptKind::UserDefinedFunction), 1);
}
