//! Unit tests of partition key definitions, extraction and headers.

use super::*;
use rstest::rstest;
use serde_json::json;

fn def() -> PartitionKeyDefinition {
    PartitionKeyDefinition::parse(Some(&json!({"paths": ["/pk"]}))).unwrap()
}

#[test]
fn a_plain_string_header_is_its_own_canonical_key() {
    for value in ["", "p1", "é ü 東京", "a b", "[x]", "a'b", "{}", "\u{7f}"] {
        let header = json!([value]).to_string();
        let key = def().key_from_header(&header).unwrap();
        assert_eq!(key, header);
        let item = json!({"id": "a", "pk": value});
        assert_eq!(def().key_of(item.as_object().unwrap()), key, "{value:?}");
    }
    // Escapes take the JSON path and come out canonical.
    assert_eq!(def().key_from_header(r#"["\u0041"]"#).unwrap(), r#"["A"]"#);
    assert_eq!(def().key_from_header(r#"["a\"b"]"#).unwrap(), r#"["a\"b"]"#);
    assert!(def().key_from_header(r#"["a","b"]"#).is_err());
}

#[test]
fn item_and_header_give_the_same_key() {
    let item = json!({"id": "a", "pk": "x"});
    let key = def().key_of(item.as_object().unwrap());
    assert_eq!(key, def().key_from_header(r#"["x"]"#).unwrap());
    let missing = def().key_of(json!({"id": "a"}).as_object().unwrap());
    assert_eq!(missing, def().key_from_header("[{}]").unwrap());
    let n = def().key_of(json!({"pk": 1.0}).as_object().unwrap());
    assert_eq!(n, def().key_from_header("[1]").unwrap());
}

#[test]
fn nested_paths_and_bad_input() {
    let d = PartitionKeyDefinition::parse(Some(&json!({"paths": ["/a/b"]}))).unwrap();
    assert_eq!(
        d.key_of(json!({"a": {"b": "v"}}).as_object().unwrap()),
        r#"["v"]"#
    );
    assert!(def().key_from_header("x").is_err());
    assert!(def().key_from_header(r#"["a","b"]"#).is_err());
    assert!(PartitionKeyDefinition::parse(Some(&json!({"paths": "pk"}))).is_err());
    assert!(PartitionKeyDefinition::parse(Some(&json!({"paths": ["pk"]}))).is_err());
}

fn parsed(paths: Value) -> PartitionKeyDefinition {
    PartitionKeyDefinition::parse(Some(&json!({ "paths": paths }))).unwrap()
}

fn key(def: &PartitionKeyDefinition, item: Value) -> String {
    def.key_of(item.as_object().unwrap())
}

// The Python SDK's own tests of quoted paths
// (test_partitioned_collection_partition_key_extraction_special_chars):
// the SDK extracts ["val1", "val2"] and ["val3", "val4"] from these items.
#[rstest]
#[case(r#"/"first level' 1*()"/"le/vel2""#, &["first level' 1*()", "le/vel2"])]
#[case(r#"/'first level" 1*()'/'first le/vel2'"#, &["first level\" 1*()", "first le/vel2"])]
#[case(r#"/'level" 1*()'/'le/vel2'"#, &["level\" 1*()", "le/vel2"])]
#[case("/a/b", &["a", "b"])]
#[case("/ spaced /b/", &["spaced", "b"])]
#[case(r#"/"say \"hi\"""#, &[r#"say \"hi\""#])]
fn paths_split_as_the_sdks_parse_them(#[case] path: &str, #[case] expected: &[&str]) {
    assert_eq!(split_path(path).unwrap(), expected);
}

#[rstest]
#[case("/'open")]
#[case("/a//b")]
#[case(r#"/"a"b"#)]
fn malformed_paths_are_refused(#[case] path: &str) {
    assert!(split_path(path).is_err(), "{path}");
    let e = PartitionKeyDefinition::parse(Some(&json!({"paths": [path]}))).unwrap_err();
    assert_eq!(e.status.as_u16(), 400);
    assert!(e.message.contains(path), "{}", e.message);
}

#[test]
fn quoted_paths_find_their_properties() {
    let def = parsed(json!([
        r#"/"first level' 1*()"/"le/vel2""#,
        r#"/'second level" 1*()'/'le/vel2'"#
    ]));
    let item = json!({
        "id": "document1",
        "first level' 1*()": {"le/vel2": "val1"},
        "second level\" 1*()": {"le/vel2": "val2"}
    });
    assert_eq!(key(&def, item), r#"["val1","val2"]"#);
}

/// Objects, arrays and absent paths are all "undefined", which the SDKs
/// send as {}; null is a value of its own.
#[rstest]
#[case(json!({"id": "a"}), "[{}]")]
#[case(json!({"pk": {"nested": 1}}), "[{}]")]
#[case(json!({"pk": {}}), "[{}]")]
#[case(json!({"pk": [1, 2]}), "[{}]")]
#[case(json!({"pk": null}), "[null]")]
#[case(json!({"pk": "x"}), r#"["x"]"#)]
fn objects_arrays_and_absent_values_are_undefined(#[case] item: Value, #[case] expected: &str) {
    assert_eq!(key(&def(), item), expected);
    assert_eq!(def().key_from_header(expected).unwrap(), expected);
}

#[test]
fn a_hierarchical_item_lacking_levels_is_addressed_with_undefined_levels() {
    let def = parsed(json!(["/city", "/zipcode"]));
    let vancouver = key(&def, json!({"id": "d", "city": "Vancouver"}));
    assert_eq!(vancouver, r#"["Vancouver",{}]"#);
    // The JavaScript SDK's header for it names it.
    assert_eq!(
        def.key_from_header(r#"["Vancouver",{}]"#).unwrap(),
        vancouver
    );
    // Python's ["Vancouver", null] names another key, and the service
    // refuses it for this item with its definition message.
    assert_ne!(
        def.key_from_header(r#"["Vancouver",null]"#).unwrap(),
        vancouver
    );
    let e = def.mismatch_error();
    assert!(e.message.starts_with(
        "Partition key provided either doesn't correspond to definition in the collection"
    ));
    assert_eq!(key(&def, json!({"id": "e"})), "[{},{}]");
    assert_eq!(
        key(&def, json!({"city": null, "zipcode": 1000.0})),
        "[null,1000]"
    );
    // A single-path key keeps the message the service gives there.
    assert!(self::def()
        .mismatch_error()
        .message
        .starts_with("PartitionKey extracted from document doesn't match"));
}

#[test]
fn a_prefix_of_a_hierarchical_key_scopes_feeds_but_not_point_operations() {
    let def = parsed(json!(["/state", "/city", "/zipcode"]));
    let scope = def.scope_from_header(r#"["CA"]"#).unwrap();
    assert_eq!(
        scope,
        KeyScope::Prefix {
            text: r#"["CA","#.into(),
            components: 1
        }
    );
    for (pk, inside) in [
        (r#"["CA","Oxnard","93033"]"#, true),
        (r#"["CA",{},{}]"#, true),
        (r#"["CAL","Oxnard","93033"]"#, false),
        (r#"["WA","Seattle","98101"]"#, false),
    ] {
        assert_eq!(scope.contains(pk), inside, "{pk}");
    }
    let two = def.scope_from_header(r#"["CA", "Oxnard"]"#).unwrap();
    assert!(two.contains(r#"["CA","Oxnard","93030"]"#));
    assert!(!two.contains(r#"["CA","Oxnard2","93030"]"#));
    // 1.0 and 1 are one key in a prefix too.
    let numeric = def.scope_from_header("[1.0]").unwrap();
    assert!(numeric.contains(r#"[1,"a","b"]"#));
    assert_eq!(
        def.scope_from_header(r#"["CA","Oxnard","93033"]"#).unwrap(),
        KeyScope::Exact(r#"["CA","Oxnard","93033"]"#.into())
    );
    // A point operation needs the whole key (the Python SDK's test reads
    // with ["Redmond"] on two levels and expects this 400).
    let e = def.key_from_header(r#"["CA"]"#).unwrap_err();
    assert_eq!(e.status.as_u16(), 400);
    assert!(e.message.starts_with(
        "Partition key provided either doesn't correspond to definition in the collection"
    ));
    for bad in ["[]", r#"["a","b","c","d"]"#] {
        assert!(def.scope_from_header(bad).is_err(), "{bad}");
    }
    // A single-path key has no prefix.
    assert!(self::def().scope_from_header("[]").is_err());
}

#[rstest]
#[case(r#"[{"a": 1}]"#)]
#[case("[[1, 2]]")]
#[case(r#"["x", [1]]"#)]
fn objects_and_arrays_in_the_header_are_refused(#[case] header: &str) {
    let def = if header.starts_with("[\"x\"") {
        parsed(json!(["/a", "/b"]))
    } else {
        def()
    };
    let e = def.scope_from_header(header).unwrap_err();
    assert_eq!(e.status.as_u16(), 400);
    assert!(
        e.message.contains("never a partition key value"),
        "{}",
        e.message
    );
}

/// A container made without a partition key, as the service keeps it after
/// "Migrate non-partitioned containers to partitioned containers": items
/// without `_partitionKey` share PartitionKey.NONE (`[]`, `[{}]` on the
/// wire), an item with one is in that logical partition.
#[test]
fn a_container_without_a_key_partitions_by_its_system_key() {
    let none = PartitionKeyDefinition::parse(None).unwrap();
    let shown = PartitionKeyDefinition::parse(Some(&system_key_definition())).unwrap();
    assert_eq!(none, shown, "the shown system key reads back as no key");
    let item = |v: Value| v.as_object().unwrap().clone();
    assert_eq!(none.key_of(&item(json!({"id": "a"}))), "[]");
    assert_eq!(
        none.key_of(&item(json!({"id": "a", "_partitionKey": "Doe"}))),
        r#"["Doe"]"#
    );
    assert_eq!(
        none.key_of(&item(json!({"id": "a", "_partitionKey": 2.0}))),
        "[2]"
    );
    assert_eq!(
        none.key_of(&item(json!({"id": "a", "_partitionKey": {"x": 1}}))),
        "[]",
        "an object is no key value: the item is in PartitionKey.NONE"
    );
    for header in ["[]", "[{}]"] {
        assert_eq!(none.key_from_header(header).unwrap(), "[]", "{header}");
    }
    assert_eq!(none.key_from_header(r#"["Doe"]"#).unwrap(), r#"["Doe"]"#);
    assert_eq!(none.key_from_header("[2.0]").unwrap(), "[2]");
    assert_eq!(none.key_from_header("[null]").unwrap(), "[null]");
    let refused = none.key_from_header(r#"["a","b"]"#).unwrap_err();
    assert_eq!(
        (refused.status.as_u16(), refused.substatus),
        (400, Some(1001))
    );
    assert!(
        refused.message.contains("/_partitionKey"),
        "{}",
        refused.message
    );
    assert_eq!(
        none.key_object(r#"["Doe"]"#),
        json!({"_partitionKey": "Doe"})
    );
    assert_eq!(none.key_object("[]"), json!({}));
}
