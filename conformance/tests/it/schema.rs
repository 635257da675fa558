//! The JSON Schemas of the fixture files (`fixtures/schema/`): the
//! checked-in files are the ones the serde types generate, every fixture
//! file fits its schema (as do the loader tests' good files), and the
//! schema is not vacuous: files the loader refuses for their shape, the
//! schema refuses too.

use crate::fixtures::{FEED, GOOD, SCRIPTS};
use cosmos_conformance::default_fixtures_dir;
use cosmos_conformance::fixtures::parse_file;
use cosmos_conformance::schema;
use jsonschema::Validator;
use rstest::rstest;
use serde_json::Value;
use std::path::{Path, PathBuf};

const REGENERATE: &str = "cargo run -p cosmos-conformance -- --schemas fixtures/schema";

fn checked_in(name: &str) -> Value {
    let path = default_fixtures_dir().join(schema::DIR).join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; write it with `{REGENERATE}`", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator(name: &str) -> Validator {
    let schema = checked_in(name);
    jsonschema::draft7::meta::validate(&schema)
        .unwrap_or_else(|e| panic!("{name} is not a draft-07 schema: {e}"));
    jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The schema's complaints about a TOML text, one a line (none: it fits).
fn errors(validator: &Validator, text: &str) -> Vec<String> {
    let instance: Value = toml::from_str(text).expect("valid TOML");
    validator
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_checked_in_schemas_are_the_generated_ones() {
    let dir = default_fixtures_dir().join(schema::DIR);
    let generated = schema::files();
    for (name, text) in &generated {
        let path = dir.join(name);
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == *text,
            "{} is not what the serde types generate: run `{REGENERATE}` and commit it",
            path.display()
        );
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/schema exists")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    on_disk.sort();
    let mut names: Vec<String> = generated.iter().map(|(n, _)| n.to_string()).collect();
    names.sort();
    assert_eq!(
        on_disk, names,
        "fixtures/schema holds only the generated schemas"
    );
}

#[rstest]
#[case::cases("cases", "cases.schema.json")]
#[case::expectations("expectations", "expectations.schema.json")]
fn every_fixture_file_fits_its_schema(#[case] dir: &str, #[case] schema: &str) {
    let validator = validator(schema);
    let files = toml_files(&default_fixtures_dir().join(dir));
    assert!(!files.is_empty(), "no fixtures in {dir}");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let errors = errors(&validator, &text);
        assert!(
            errors.is_empty(),
            "{} does not fit {schema}:\n{}",
            file.display(),
            errors.join("\n")
        );
    }
}

#[test]
fn the_loader_tests_good_files_fit_the_schema() {
    let validator = validator("cases.schema.json");
    for (name, text) in [("GOOD", GOOD), ("FEED", FEED), ("SCRIPTS", SCRIPTS)] {
        parse_file(Path::new(name), text).expect("the loader takes it");
        assert_eq!(errors(&validator, text), Vec::<String>::new(), "{name}");
    }
}

/// Replaces `from` by `to` in the loader tests' good file: the loader and
/// the schema both refuse the result (the schema at `where_`).
#[rstest]
#[case::unknown_step_key(
    r#"{ read = "a", expect"#,
    r#"{ read = "a", wait = 3, expect"#,
    "/case/0/steps/1"
)]
#[case::unknown_file_key(r#"title = "t""#, "title = \"t\"\nsetup = 1", "")]
#[case::two_actions(
    r#"{ read = "a", expect"#,
    r#"{ read = "a", delete = "a", expect"#,
    "/case/0/steps/1"
)]
#[case::no_action(r#"{ read = "a", expect"#, "{ expect", "/case/0/steps/1")]
#[case::no_expect(
    r#"{ read = "a", expect = "visible" }"#,
    r#"{ read = "a" }"#,
    "/case/0/steps/1"
)]
#[case::read_expects_a_status(
    r#"{ read = "a", expect = "visible" }"#,
    r#"{ read = "a", expect = "200" }"#,
    "/case/0/steps/1/expect"
)]
#[case::write_expects_presence(
    r#"expect = "201""#,
    r#"expect = "visible""#,
    "/case/0/steps/0/expect"
)]
#[case::error_without_code(r#"expect = "201""#, r#"expect = "400""#, "/case/0/steps/0/expect")]
#[case::rows_without_brackets(
    r#"expect = "[ b,a ]""#,
    r#"expect = "a, b""#,
    "/case/0/steps/3/expect"
)]
#[case::match_on_a_write(
    r#"create = '{"id": "a"}', "#,
    r#"create = '{"id": "a"}', match = '{}', "#,
    "/case/0/steps/0"
)]
#[case::patch_without_operations(r#"create = '{"id": "a"}'"#, r#"patch = "a""#, "/case/0/steps/0")]
#[case::newer_schema_version("schema-version = 1", "schema-version = 2", "/schema-version")]
#[case::bad_citation(r#"cites = ["R4"]"#, r#"cites = ["R13"]"#, "/case/0/source/cites/0")]
#[case::no_citation(r#"cites = ["R4"]"#, "cites = []", "/case/0/source/cites")]
#[case::unknown_seed(r#"seeds = ["001"]"#, r#"seeds = ["009"]"#, "/case/0/source/seeds/0")]
#[case::bad_id(r#"id = "X.1""#, r#"id = "X 1""#, "/case/0/id")]
#[case::time_as_text("at = 10, read", r#"at = "10", read"#, "/case/0/steps/2/at")]
#[case::no_case("[[case]]", "[[not-a-case]]", "")]
fn a_file_the_loader_refuses_for_its_shape_the_schema_refuses_too(
    #[case] from: &str,
    #[case] to: &str,
    #[case] where_: &str,
) {
    assert!(
        GOOD.contains(from),
        "the test's pattern {from:?} is in GOOD"
    );
    let broken = GOOD.replacen(from, to, 1);
    assert!(
        parse_file(Path::new("broken.toml"), &broken).is_err(),
        "the loader takes {broken}"
    );
    let errors = errors(&validator("cases.schema.json"), &broken);
    assert!(!errors.is_empty(), "the schema takes {broken}");
    assert!(
        errors.iter().any(|e| e.starts_with(&format!("{where_}:"))),
        "expected a complaint at {where_:?}, got:\n{}",
        errors.join("\n")
    );
}

#[test]
fn a_change_feed_or_sproc_step_of_the_wrong_shape_is_refused() {
    let validator = validator("cases.schema.json");
    for (text, from, to) in [
        (
            FEED,
            r#"changes = "all-versions", from = "now""#,
            r#"changes = "every", from = "now""#,
        ),
        (FEED, r#"from = "beginning""#, r#"from = "start""#),
        (
            FEED,
            r#"{ at = 0, create = '{"id": "a"}', expect"#,
            r#"{ at = 0, create = '{"id": "a"}', purge = true, expect"#,
        ),
        (SCRIPTS, r#"expect = "400""#, r#"expect = "400 BadRequest""#),
        (SCRIPTS, r#"probe = "function"#, r#""pro be" = "function"#),
    ] {
        assert!(text.contains(from), "{from:?}");
        let broken = text.replacen(from, to, 1);
        assert!(
            parse_file(Path::new("broken.toml"), &broken).is_err(),
            "{to}"
        );
        assert!(
            !errors(&validator, &broken).is_empty(),
            "the schema takes {to}"
        );
    }
}

#[test]
fn an_expectations_file_of_the_wrong_shape_is_refused() {
    let validator = validator("expectations.schema.json");
    let good = "implementation = \"x\"\n\n[[failure]]\nid = \"E3.1\"\nreason = \"never expires\"\n";
    assert_eq!(errors(&validator, good), Vec::<String>::new());
    for broken in [
        good.replace("implementation", "implementer"),
        good.replace("reason = \"never expires\"", "reason = \"\""),
        good.replace("[[failure]]", "[[failures]]"),
        good.replace("id = \"E3.1\"\n", ""),
    ] {
        assert!(
            !errors(&validator, &broken).is_empty(),
            "the schema takes {broken}"
        );
        assert!(
            cosmos_conformance::expectations::Expectations::parse(&broken).is_err(),
            "the loader takes {broken}"
        );
    }
}

/// The step rules name only keys a step has: an action key or a key that
/// goes with one, spelt as serde reads it.
#[test]
fn the_step_rules_name_real_keys() {
    let schema = schema::cases();
    let step = &schema["definitions"]["StepEntry"];
    let properties = step["properties"].as_object().expect("properties");
    let mut named: Vec<&str> = step["dependencies"]
        .as_object()
        .expect("dependencies")
        .keys()
        .map(String::as_str)
        .collect();
    for rule in step["oneOf"].as_array().expect("oneOf") {
        named.extend(
            rule["required"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str),
        );
    }
    assert!(named.len() > 13, "{named:?}");
    for key in named {
        assert!(properties.contains_key(key), "{key} is not a step key");
    }
}

/// The shapes of `expect` in the schema are looser than the grammar: what
/// the loader takes for each kind of step, the schema takes too.
#[rstest]
#[case::write_created(r#"create = '{"id": "b"}', expect = "201 Created""#)]
#[case::write_refused(r#"create = '{"id": "b"}', expect = "409 Conflict""#)]
#[case::upsert(r#"upsert = '{"id": "b"}', expect = "200""#)]
#[case::delete(r#"delete = "a", expect = "204""#)]
#[case::read_container(r#"read-container = "c", match = '{"defaultTtl": 10}', expect = "visible""#)]
#[case::query_values(r#"query = "SELECT VALUE COUNT(1) FROM c", expect = "[]""#)]
#[case::batch_results(r#"batch = '[{"operationType": "Read", "id": "a"}]', expect = "207 [404]""#)]
#[case::batch_refused(
    r#"batch = '[{"operationType": "Read", "id": "a"}]', expect = "400 BadRequest""#
)]
#[case::batch_spaced(r#"batch = '[{"operationType": "Read", "id": "a"}]', expect = "200 [ 200 ]""#)]
fn a_step_the_loader_takes_fits_the_schema(#[case] step: &str) {
    let from = r#"read = "a", expect = "visible""#;
    assert!(GOOD.contains(from));
    let text = GOOD.replacen(from, step, 1);
    parse_file(Path::new("good.toml"), &text).expect("the loader takes it");
    let errors = errors(&validator("cases.schema.json"), &text);
    assert!(errors.is_empty(), "{step}:\n{}", errors.join("\n"));
}
