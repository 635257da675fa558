//! The fixture loader: the shipped cases are complete and well-formed, and
//! a broken fixture is refused with a message naming what is wrong.

use crate::common::all_cases;
use cosmos_conformance::fixtures::{parse_file, Action, Expect, SCHEMA_VERSION};
use rstest::rstest;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn the_shipped_fixtures_hold_at_least_40_cases_with_unique_ids() {
    let cases = all_cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let ids: BTreeSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), cases.len());
}

#[rstest]
#[case::example_tables(&["E1.1", "E1.2", "E1.3", "E2.1", "E2.2", "E2.3", "E3.1", "E3.2", "E3.3"])]
#[case::matrix(&["M1.1", "M1.2", "M1.3", "M2.1", "M2.2", "M2.3", "M3.1", "M3.2", "M3.3"])]
#[case::matrix_explicit_null(&["M1.1-null", "M2.1-null", "M3.1-null"])]
#[case::queries(&["R5.select", "R5.count", "R5.where"])]
#[case::indexing(&["R10.1", "R10.2", "R10.3", "R10.4", "R10.5"])]
fn the_documented_cells_are_all_there(#[case] ids: &[&str]) {
    let cases = all_cases();
    for id in ids {
        assert!(cases.iter().any(|c| c.id == *id), "{id} is missing");
    }
}

#[rstest]
fn every_lifecycle_story_has_a_case(#[values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)] story: u32) {
    let story = format!("L{story}");
    assert!(
        all_cases().iter().any(|c| c.source.cites.contains(&story)),
        "no case cites {story}"
    );
}

#[rstest]
fn every_invalid_value_is_refused_on_create_and_replace(
    #[values("item-create", "item-replace", "container-create", "container-replace")] target: &str,
    #[values("zero", "minus-two", "fraction", "string", "too-large", "null", "max")] value: &str,
) {
    let id = format!("L9.{target}.{value}");
    let found = all_cases().into_iter().find(|c| c.id == id);
    // An explicit null defaultTtl is valid (R2: TTL off), so only items refuse null.
    if value == "null" && target.starts_with("container") {
        assert!(found.is_none(), "{id} would contradict R2");
        return;
    }
    let case = found.unwrap_or_else(|| panic!("{id} is missing"));
    let refused = case.steps.iter().any(|s| {
        s.expect
            == Expect::Status {
                status: 400,
                code: Some("BadRequest".into()),
            }
    });
    assert_eq!(refused, value != "max", "{id}");
}

#[test]
fn missing_and_explicit_null_are_different_requests() {
    let cases = all_cases();
    let container = |id: &str| {
        cases
            .iter()
            .find(|c| c.id == id)
            .and_then(|c| c.container.clone())
            .unwrap()
    };
    assert!(!container("M1.1").contains_key("defaultTtl"));
    assert_eq!(container("M1.1-null")["defaultTtl"], json!(null));
    // The item "ttl = null" rows of the example tables send no ttl (R3).
    let e31 = cases.iter().find(|c| c.id == "E3.1").unwrap();
    match &e31.steps[0].action {
        Action::Create(body) => assert!(!body.contains_key("ttl")),
        other => panic!("E3.1 starts with {other:?}"),
    }
}

#[test]
fn every_case_cites_a_rule_and_a_seed() {
    for case in all_cases() {
        assert!(!case.source.cites.is_empty(), "{}", case.id);
        // The seeds are the TTL specification's: a case citing only
        // throughput rules has none.
        if case.area == "throughput" {
            assert!(case.source.throughput_only(), "{}", case.id);
        } else {
            assert!(!case.source.seeds.is_empty(), "{}", case.id);
        }
    }
}

pub const GOOD: &str = r#"
schema-version = 1
area = "a"
title = "t"

[[case]]
id = "X.1"
title = "x"
source = { cites = ["R4"], seeds = ["001"] }
container = '{"defaultTtl": 10}'
steps = [
  { at = 0, create = '{"id": "a"}', expect = "201" },
  { read = "a", expect = "visible" },
  { at = 10, read = "a", expect = "absent" },
  { at = 10, query = "SELECT * FROM c", expect = "[ b,a ]" },
]
"#;

#[test]
fn a_good_file_loads_with_times_carried_forward_and_rows_sorted() {
    let cases = parse_file(Path::new("good.toml"), GOOD).unwrap();
    assert_eq!(cases.len(), 1);
    let steps = &cases[0].steps;
    assert_eq!(
        steps.iter().map(|s| s.at).collect::<Vec<_>>(),
        [0, 0, 10, 10]
    );
    assert_eq!(steps[3].expect, Expect::Rows(vec!["a".into(), "b".into()]));
    assert_eq!(cases[0].area, "a");
}

/// Replaces `from` by `to` in the good file; the result must be refused
/// with a message containing `message`.
#[rstest]
#[case::newer_schema("schema-version = 1", &format!("schema-version = {}", SCHEMA_VERSION + 1), "is not understood by this runner")]
#[case::no_schema("schema-version = 1", "", "missing integer `schema-version`")]
#[case::unknown_key(r#"title = "x""#, "title = \"x\"\nsetup = 1", "unknown field `setup`")]
#[case::unknown_step_key(
    r#"{ read = "a", expect"#,
    r#"{ read = "a", wait = 3, expect"#,
    "unknown field `wait`"
)]
#[case::two_actions(
    r#"{ read = "a", expect"#,
    r#"{ read = "a", delete = "a", expect"#,
    "exactly one action"
)]
#[case::no_action(r#"{ read = "a", expect"#, "{ expect", "a step needs one action")]
#[case::read_expects_status(
    r#"{ read = "a", expect = "visible" }"#,
    r#"{ read = "a", expect = "200" }"#,
    "a read expects \"visible\" or \"absent\""
)]
#[case::write_expects_presence(
    r#"expect = "201""#,
    r#"expect = "visible""#,
    "a write expects a status"
)]
#[case::error_without_code(
    r#"expect = "201""#,
    r#"expect = "400""#,
    "an error status names its code"
)]
#[case::rows_without_brackets(
    r#"expect = "[ b,a ]""#,
    r#"expect = "a, b""#,
    "a query expects rows"
)]
#[case::back_in_time(
    r#"{ read = "a", expect = "visible" }"#,
    r#"{ at = 5, read = "a", expect = "visible" }, { at = 4, read = "a", expect = "visible" }"#,
    "goes back in time"
)]
#[case::bad_citation(r#"cites = ["R4"]"#, r#"cites = ["R13"]"#, "cite a rule")]
#[case::no_citation(r#"cites = ["R4"]"#, "cites = []", "must name at least one rule")]
#[case::unknown_seed(r#"seeds = ["001"]"#, r#"seeds = ["009"]"#, "the seeds are")]
#[case::bad_json(r#"'{"id": "a"}'"#, r#"'{"id": "a",}'"#, "is not valid JSON")]
#[case::item_without_id(
    r#"'{"id": "a"}'"#,
    r#"'{"ttl": 5}'"#,
    "an item body has a string \"id\""
)]
#[case::match_on_write(
    r#"create = '{"id": "a"}', "#,
    r#"create = '{"id": "a"}', match = '{}', "#,
    "`match` belongs to `read`"
)]
#[case::no_container(
    r#"container = '{"defaultTtl": 10}'"#,
    "",
    "either has a `container` or creates it"
)]
#[case::duplicate_container(
    r#"{ at = 0, create = '{"id": "a"}', expect = "201" },"#,
    r#"{ at = 0, create-container = '{}', expect = "201" },"#,
    "not both or neither"
)]
#[case::bad_id(r#"id = "X.1""#, r#"id = "X 1""#, "an id is made of")]
fn a_broken_file_is_refused_with_a_clear_message(
    #[case] from: &str,
    #[case] to: &str,
    #[case] message: &str,
) {
    assert!(
        GOOD.contains(from),
        "the test's pattern {from:?} is in GOOD"
    );
    let error = parse_file(Path::new("broken.toml"), &GOOD.replacen(from, to, 1)).unwrap_err();
    let text = error.to_string();
    assert!(text.starts_with("broken.toml"), "{text}");
    assert!(
        text.contains(message),
        "{text:?} should contain {message:?}"
    );
}

const FLOOD: &str = r#"
schema-version = 1
area = "throughput"
title = "t"

[[case]]
id = "T.x"
title = "x"
source = { cites = ["T1", "T7"] }
container = '{}'
throughput = 400
steps = [
  { at = 0, flood = '{"id": "f", "n": 1}', expect = "429/3200 after 400 RU" },
  { at = 0, create = '{"id": "h"}', priority = "high", expect = "201" },
  { at = 1, flood = '{"id": "g"}', priority = "low", expect = "429/3200 within 400 RU" },
  { at = 2, read-refused = "f", expect = "absent" },
]
"#;

#[test]
fn a_throughput_case_cites_no_seed_and_needs_a_test_clock() {
    use cosmos_conformance::fixtures::{Bound, Priority};
    let cases = parse_file(Path::new("flood.toml"), FLOOD).unwrap();
    let case = &cases[0];
    assert!(case.source.seeds.is_empty());
    assert_eq!(case.source.to_string(), "T1, T7");
    assert_eq!(case.throughput, Some(400));
    assert_eq!((case.database_throughput, case.shared_with), (None, 0));
    assert!(case.needs_test_clock());
    // A container sharing a database's throughput: the flood's budget is
    // the database's.
    let shared = FLOOD.replacen(
        "throughput = 400",
        "database-throughput = 400\nshared-with = 3",
        1,
    );
    let case = &parse_file(Path::new("shared.toml"), &shared).unwrap()[0];
    assert_eq!(case.throughput, None);
    assert_eq!((case.database_throughput, case.shared_with), (Some(400), 3));
    assert!(!all_cases()
        .iter()
        .filter(|c| c.area != "throughput")
        .any(|c| c.needs_test_clock()));
    let steps = &case.steps;
    match &steps[0].action {
        Action::Flood(flood) => {
            assert_eq!(flood.prefix, "f");
            assert_eq!(flood.body.get("n"), Some(&json!(1)));
            assert!(!flood.body.contains_key("id"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        steps[2].expect,
        Expect::Flood {
            budget: 400,
            bound: Bound::Within
        }
    );
    assert_eq!(steps[1].priority, Some(Priority::High));
    assert_eq!(steps[2].label(), "flood g priority low");
    assert_eq!(steps[3].label(), "read-refused f");
}

/// As [`a_broken_file_is_refused_with_a_clear_message`], from [`FLOOD`].
#[rstest]
#[case::seeds_for_ttl_rules(
    r#"cites = ["T1", "T7"]"#,
    r#"cites = ["T1", "R4"]"#,
    "must name at least one seed file"
)]
#[case::unknown_throughput_rule(
    r#"cites = ["T1", "T7"]"#,
    r#"cites = ["T8"]"#,
    "a throughput rule (T1-T7)"
)]
#[case::no_throughput(
    "throughput = 400
",
    "",
    "needs the case's `throughput`"
)]
#[case::odd_throughput("throughput = 400", "throughput = 450", "multiples of 100")]
#[case::both_throughputs(
    "throughput = 400",
    "throughput = 400\ndatabase-throughput = 400",
    "not both"
)]
#[case::odd_database_throughput(
    "throughput = 400",
    "database-throughput = 450",
    "`database-throughput` is RU/s in multiples of 100"
)]
#[case::shared_with_alone(
    "throughput = 400",
    "throughput = 400\nshared-with = 1",
    "`shared-with` goes with `database-throughput`"
)]
#[case::shared_with_too_many(
    "throughput = 400",
    "database-throughput = 400\nshared-with = 25",
    "1 to 24 other containers"
)]
#[case::budget_over_throughput(
    r#"expect = "429/3200 after 400 RU""#,
    r#"expect = "429/3200 after 500 RU""#,
    "cannot exceed the container's 400 RU/s"
)]
#[case::after_shares_its_second(
    r#"{ at = 1, flood = '{"id": "g"}', priority = "low", expect = "429/3200 within 400 RU" }"#,
    r#"{ at = 0, flood = '{"id": "g"}', expect = "429/3200 after 400 RU" }"#,
    "the flood is the first step @0"
)]
#[case::same_flood_twice(
    r#"'{"id": "g"}'"#,
    r#"'{"id": "f"}'"#,
    "another `flood` is named \"f\""
)]
#[case::refused_of_no_flood(
    r#"read-refused = "f""#,
    r#"read-refused = "z""#,
    "names an earlier `flood`"
)]
#[case::flood_in_another_partition(
    r#"'{"id": "g"}'"#,
    r#"'{"id": "g", "pk": "p"}'"#,
    "its item has no `pk`"
)]
#[case::flood_expects_a_status(
    r#"expect = "429/3200 after 400 RU""#,
    r#"expect = "429 TooManyRequests""#,
    "a flood expects"
)]
#[case::bad_priority(
    r#"priority = "high""#,
    r#"priority = "urgent""#,
    "\"low\" or \"high\""
)]
#[case::priority_on_a_read(
    r#"read-refused = "f", "#,
    r#"read-refused = "f", priority = "low", "#,
    "`priority` belongs to `create` and `flood`"
)]
fn a_broken_throughput_case_is_refused(
    #[case] from: &str,
    #[case] to: &str,
    #[case] message: &str,
) {
    assert!(FLOOD.contains(from), "{from:?} is in FLOOD");
    let error = parse_file(Path::new("broken.toml"), &FLOOD.replacen(from, to, 1)).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains(message),
        "{text:?} should contain {message:?}"
    );
}

#[test]
fn the_built_in_fixtures_are_the_fixtures_directory() {
    use cosmos_conformance::source::FixtureSource;
    let built_in = FixtureSource::Embedded
        .cases()
        .expect("the built-in fixtures load");
    let on_disk = all_cases();
    assert_eq!(built_in.len(), on_disk.len());
    for (a, b) in built_in.iter().zip(&on_disk) {
        assert_eq!(
            (&a.id, &a.steps, &a.container),
            (&b.id, &b.steps, &b.container)
        );
    }
    for name in cosmos_conformance::source::expectation_names() {
        let dir = FixtureSource::Dir(cosmos_conformance::default_fixtures_dir());
        assert_eq!(
            FixtureSource::Embedded.expectations(&name).unwrap(),
            dir.expectations(&name).unwrap(),
            "{name}"
        );
    }
}

pub const FEED: &str = r#"
schema-version = 1
area = "change-feed"
title = "t"

[[case]]
id = "F.1"
title = "t"
source = { cites = ["R5"], seeds = ["000"] }
container = '{"defaultTtl": 10}'
steps = [
  { at = 0, changes = "all-versions", from = "now", expect = "[]" },
  { at = 0, create = '{"id": "a"}', expect = "201" },
  { at = 0, changes = "latest-version", from = "beginning", show = "v", page-size = 1, expect = '[a v={"x":1,"y":2}]' },
  { at = 20, changes = "all-versions", purge = true, expect = "[ttl-delete a @>=10, create a]" },
]
"#;

#[test]
fn change_feed_steps_load_with_their_entries_sorted() {
    use cosmos_conformance::fixtures::{Changes, FeedMode, FeedStart};
    let cases = parse_file(Path::new("feed.toml"), FEED).unwrap();
    let steps = &cases[0].steps;
    assert_eq!(
        steps[2].action,
        Action::Changes(Changes {
            mode: FeedMode::LatestVersion,
            from: Some(FeedStart::Beginning),
            purge: false,
            show: Some("v".into()),
            page_size: Some(1),
        })
    );
    assert_eq!(
        steps[2].expect,
        Expect::Changes(vec![r#"a v={"x":1,"y":2}"#.into()])
    );
    assert_eq!(
        steps[3].expect,
        Expect::Changes(vec!["create a".into(), "ttl-delete a @>=10".into()])
    );
    assert_eq!(steps[3].action.label(), "changes all-versions after purge");
}

#[rstest]
#[case::unknown_mode(
    r#"changes = "all-versions", from = "now""#,
    r#"changes = "every", from = "now""#,
    "is \"latest-version\" or \"all-versions\""
)]
#[case::all_versions_from_the_beginning(
    r#"changes = "all-versions", from = "now""#,
    r#"changes = "all-versions", from = "beginning""#,
    "starts only from now"
)]
#[case::no_start(
    r#"changes = "all-versions", from = "now""#,
    r#"changes = "all-versions""#,
    "says where it starts"
)]
#[case::purge_on_latest(
    r#"from = "beginning", show"#,
    r#"from = "beginning", purge = true, show"#,
    "only the all-versions feed"
)]
#[case::show_on_all_versions(
    r#"purge = true,"#,
    r#"purge = true, show = "v","#,
    "`show` belongs to the latest-version feed"
)]
#[case::from_on_a_read(
    r#"{ at = 0, create = '{"id": "a"}', expect"#,
    r#"{ at = 0, create = '{"id": "a"}', from = "now", expect"#,
    "`from` belongs to `changes`"
)]
#[case::ttl_delete_without_instant(
    "ttl-delete a @>=10",
    "ttl-delete a",
    "`ttl-delete ID @>=INSTANT`"
)]
#[case::unknown_operation("create a]", "upsert a]", "an all-versions entry is")]
#[case::latest_without_shown_value(
    r#"'[a v={"x":1,"y":2}]'"#,
    "'[a]'",
    "a latest-version entry is the item's id and its `v`"
)]
#[case::no_brackets(
    r#"expect = "[]" }"#,
    r#"expect = "" }"#,
    "a change feed read expects entries"
)]
fn a_broken_change_feed_step_is_refused(
    #[case] from: &str,
    #[case] to: &str,
    #[case] message: &str,
) {
    assert!(
        FEED.contains(from),
        "the test's pattern {from:?} is in FEED"
    );
    let error = parse_file(Path::new("broken.toml"), &FEED.replacen(from, to, 1)).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains(message),
        "{text:?} should contain {message:?}"
    );
}

pub const SCRIPTS: &str = r#"
schema-version = 1
area = "scripts"
title = "t"

[scripts]
create = '''function (doc) {
  var c = getContext().getCollection();
  c.createDocument(c.getSelfLink(), doc, function (err) { if (err) throw err; });
}'''
probe = "function (id) { getContext().getResponse().setBody({found: false}); }"

[[case]]
id = "S.1"
title = "t"
source = { cites = ["R5"], seeds = ["000"] }
container = '{"defaultTtl": 10}'
steps = [
  { at = 0, sproc = "create", args = '[{"id": "a", "ttl": 5}]', expect = '200 ""' },
  { at = 20, sproc = "probe", args = '["a"]', expect = '200 {"found": false}' },
  { sproc = "probe", expect = "400" },
]
"#;

#[test]
fn sproc_steps_load_with_their_script_and_arguments() {
    let cases = parse_file(Path::new("scripts.toml"), SCRIPTS).unwrap();
    let steps = &cases[0].steps;
    let Action::Sproc(create) = &steps[0].action else {
        panic!("{:?}", steps[0].action)
    };
    assert_eq!(create.name, "create");
    assert!(create.body.starts_with("function (doc) {\n"));
    assert_eq!(create.args, vec![json!({"id": "a", "ttl": 5})]);
    assert_eq!(steps[0].expect, Expect::Sproc(r#"200 """#.into()));
    assert_eq!(
        steps[1].expect,
        Expect::Sproc(r#"200 {"found":false}"#.into())
    );
    assert_eq!(steps[1].action.label(), r#"sproc probe ["a"]"#);
    assert_eq!(steps[2].action.label(), "sproc probe");
    assert_eq!(steps[2].expect, Expect::Sproc("400".into()));
    // A script writes the items it gets: only then do its steps start
    // countdowns for the wall clock's judgement.
    assert!(steps[0].action.is_item_write());
    assert!(!steps[1].action.is_item_write());
}

#[rstest]
#[case::unknown_script(
    r#"sproc = "probe", args"#,
    r#"sproc = "read", args"#,
    "names a script of the file's [scripts]"
)]
#[case::args_not_an_array(r#"'["a"]'"#, r#"'{"a": 1}'"#, "`args` is a JSON array")]
#[case::args_without_sproc(
    r#"{ sproc = "probe", expect = "400" }"#,
    r#"{ read = "a", args = '[]', expect = "absent" }, { sproc = "probe", expect = "400" }"#,
    "`args` belongs to `sproc`"
)]
#[case::error_with_code(
    r#"expect = "400""#,
    r#"expect = "400 BadRequest""#,
    "an error status alone"
)]
#[case::success_without_body(
    r#"expect = '200 ""'"#,
    r#"expect = "200""#,
    "a sproc expects a status and the body"
)]
#[case::body_not_json(r#"'200 {"found": false}'"#, "'200 {found: false}'", "a sproc expects")]
#[case::unused_script(
    "[[case]]",
    "unused = \"function () {}\"\n\n[[case]]",
    "script \"unused\" is run by no step"
)]
#[case::literal_ttl(
    "getContext().getCollection();",
    "getContext().getCollection(); doc.ttl = 10;",
    "writes a literal TTL"
)]
#[case::bad_script_name(r#"probe = "function"#, r#""pro be" = "function"#, "letters, digits")]
fn a_broken_sproc_step_is_refused(#[case] from: &str, #[case] to: &str, #[case] message: &str) {
    assert!(
        SCRIPTS.contains(from),
        "the test's pattern {from:?} is in SCRIPTS"
    );
    let error = parse_file(Path::new("broken.toml"), &SCRIPTS.replacen(from, to, 1)).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains(message),
        "{text:?} should contain {message:?}"
    );
}
