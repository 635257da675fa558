//! The outcome comparison, expectations, wall-clock observability and the
//! signature: the pieces that decide whether a case passes.

use crate::common::cases;
use cosmos_conformance::client::{authorization, Credentials, Response, WELL_KNOWN_KEY};
use cosmos_conformance::clock::WallClock;
use cosmos_conformance::expectations::{self, Expectations};
use cosmos_conformance::fixtures::{normalize_rows, Expect};
use cosmos_conformance::outcome::{
    observe_read, observe_rows, observe_write, CaseRun, StepOutcome, Verdict,
};
use cosmos_conformance::report::{Report, Status, Target};
use cosmos_conformance::unobservable;
use rstest::rstest;
use serde_json::{json, Map, Value};

fn response(status: u16, body: &str) -> Response {
    Response {
        status,
        body: body.to_string(),
        ..Response::default()
    }
}

fn map(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[rstest]
#[case::created(201, r#"{"id": "a"}"#, "201")]
#[case::error_with_code(
    400,
    r#"{"code": "BadRequest", "message": "The input ttl '0' is invalid."}"#,
    "400 BadRequest"
)]
#[case::error_without_code(400, "Bad Request", "400 (no error code)")]
#[case::success_with_garbage(201, "<html>", "201 (body is not a JSON object)")]
#[case::server_error(
    500,
    r#"{"code": "InternalServerError", "message": "x"}"#,
    "500 InternalServerError"
)]
fn a_write_is_observed_as_its_status_and_code(
    #[case] status: u16,
    #[case] body: &str,
    #[case] token: &str,
) {
    assert_eq!(observe_write(&response(status, body), true).token, token);
}

#[test]
fn a_delete_needs_no_body() {
    assert_eq!(observe_write(&response(204, ""), false).token, "204");
}

/// `passes`: whether the observation equals the expected `visible` token.
#[rstest]
#[case::visible(200, r#"{"id": "a", "_ts": 1, "_rid": "x"}"#, None, "visible", true)]
#[case::absent_whatever_the_body(404, "", None, "absent", false)]
#[case::another_item(200, r#"{"id": "b"}"#, None, "200 (another item)", false)]
#[case::garbage(200, "{", None, "200 (body is not a JSON object)", false)]
#[case::unauthorized(
    401,
    r#"{"code": "Unauthorized", "message": "m"}"#,
    None,
    "401 Unauthorized",
    false
)]
#[case::matching_ignores_system_properties_and_order(200, r#"{"v": 1, "_etag": "e", "id": "a", "ttl": 5}"#, Some(json!({"ttl": 5, "v": 1})), r#"visible {"ttl":5,"v":1}"#, true)]
#[case::matching_shows_the_difference(200, r#"{"id": "a", "ttl": 7}"#, Some(json!({"ttl": 5})), r#"visible {"ttl":7}"#, false)]
#[case::matching_shows_a_missing_property(200, r#"{"id": "a"}"#, Some(json!({"ttl": 5})), "visible {}", false)]
#[case::matching_is_json_equality(200, r#"{"id": "a", "ttl": 5.0}"#, Some(json!({"ttl": 5})), r#"visible {"ttl":5.0}"#, false)]
fn a_read_is_observed_as_presence(
    #[case] status: u16,
    #[case] body: &str,
    #[case] matching: Option<Value>,
    #[case] token: &str,
    #[case] passes: bool,
) {
    let matching = matching.map(map);
    let observed = observe_read(
        &response(status, body),
        Some("a"),
        matching.as_ref(),
        matching.as_ref(),
    );
    assert_eq!(observed.token, token);
    assert_eq!(
        observed.token == Expect::Visible.token(matching.as_ref()),
        passes
    );
}

#[test]
fn a_scaled_match_is_written_in_the_fixtures_seconds() {
    // On the wall clock 2000 s were sent as 4 s: the outcome still says 2000.
    let written = map(json!({"ttl": 2000}));
    let sent = map(json!({"ttl": 4}));
    let observed = observe_read(
        &response(200, r#"{"id": "a", "ttl": 4}"#),
        Some("a"),
        Some(&sent),
        Some(&written),
    );
    assert_eq!(observed.token, Expect::Visible.token(Some(&written)));
}

#[rstest]
#[case::ids_sorted(json!([{"id": "c"}, {"id": "a"}]), "[a, c]")]
#[case::values(json!([3]), "[3]")]
#[case::empty(json!([]), "[]")]
fn query_rows_ignore_order(#[case] rows: Value, #[case] token: &str) {
    assert_eq!(observe_rows(rows.as_array().unwrap()).token, token);
}

#[test]
fn tokens_sort_object_keys_at_every_depth() {
    let matching = map(json!({"v": 1, "inner": {"z": 1, "a": [{"y": 2, "b": 3}]}}));
    assert_eq!(
        Expect::Visible.token(Some(&matching)),
        r#"visible {"inner":{"a":[{"b":3,"y":2}],"z":1},"v":1}"#
    );
    assert_eq!(
        observe_rows(&[json!({"b": 1, "a": 2})]).token,
        r#"[{"a":2,"b":1}]"#
    );
}

#[test]
fn expected_rows_render_like_observed_rows() {
    let expect = Expect::Rows(normalize_rows(vec!["b".into(), "a".into()]));
    assert_eq!(
        expect.token(None),
        observe_rows(&[json!({"id": "a"}), json!({"id": "b"})]).token
    );
}

fn step(expected: &str, observed: &str) -> StepOutcome {
    StepOutcome {
        at: 1000,
        label: "read a".into(),
        expected: expected.into(),
        observed: observed.into(),
        detail: Some("message: m".into()),
    }
}

fn run(steps: Vec<StepOutcome>) -> CaseRun {
    CaseRun {
        id: "X".into(),
        steps,
        setup_error: None,
        skipped: None,
    }
}

#[test]
fn a_case_passes_only_when_every_step_matches() {
    assert_eq!(
        run(vec![step("absent", "absent")]).verdict(),
        Verdict::Passed
    );
    assert_eq!(
        run(vec![step("absent", "absent"), step("absent", "visible")]).verdict(),
        Verdict::Failed("@1000 read a: expected absent, observed visible (message: m)".into())
    );
    let mut not_run = run(vec![step("absent", "absent")]);
    not_run.setup_error = Some("no container".into());
    assert_eq!(
        not_run.verdict(),
        Verdict::Failed("setup failed: no container".into())
    );
    let mut skipped = run(vec![step("absent", "not run")]);
    skipped.skipped = Some("too coarse".into());
    assert_eq!(skipped.verdict(), Verdict::Skipped("too coarse".into()));
    assert_eq!(
        run(vec![step("absent", "visible")]).observed_text(),
        "@1000 read a: visible"
    );
}

#[rstest]
#[case(Verdict::Passed, false, Status::Passed)]
#[case(Verdict::Passed, true, Status::UnexpectedPass)]
#[case(Verdict::Failed("x".into()), false, Status::Failed)]
#[case(Verdict::Failed("x".into()), true, Status::ExpectedFailure)]
#[case(Verdict::Skipped("x".into()), false, Status::Skipped)]
#[case(Verdict::Skipped("x".into()), true, Status::Skipped)]
fn expectations_turn_verdicts_into_statuses(
    #[case] verdict: Verdict,
    #[case] listed: bool,
    #[case] status: Status,
) {
    assert_eq!(expectations::status(&verdict, listed), status);
    assert_eq!(
        status.fails_run(),
        matches!(status, Status::Failed | Status::UnexpectedPass)
    );
}

#[rstest]
#[case::no_reason(
    "implementation = \"x\"\n[[failure]]\nid = \"E3.1\"\nreason = \" \"\n",
    "without a reason"
)]
#[case::twice("implementation = \"x\"\n[[failure]]\nid = \"E3.1\"\nreason = \"a\"\n[[failure]]\nid = \"E3.1\"\nreason = \"b\"\n", "listed twice")]
#[case::unknown_key("implementation = \"x\"\nskip = []\n", "unknown field")]
fn a_bad_expectations_file_is_refused(#[case] text: &str, #[case] message: &str) {
    let error = Expectations::parse(text).unwrap_err();
    assert!(error.contains(message), "{error}");
}

#[test]
fn expectations_regenerate_from_a_report_keeping_reasons() {
    let cases = cases(&["E1.1", "E3.1", "E3.3", "L8.1"]);
    let runs: Vec<CaseRun> = cases
        .iter()
        .map(|c| {
            let mut r = run(vec![match c.id.as_str() {
                "E3.1" | "E3.3" => step("absent", "visible"),
                _ => step("absent", "absent"),
            }]);
            r.id = c.id.clone();
            if c.id == "L8.1" {
                r.skipped = Some("coarse".into());
            }
            r
        })
        .collect();
    let previous = Expectations::parse(
        "implementation = \"x\"\n[[failure]]\nid = \"E3.3\"\nreason = \"no TTL\"\n[[failure]]\nid = \"E1.1\"\nreason = \"fixed since\"\n[[failure]]\nid = \"L8.1\"\nreason = \"boundary\"\n",
    )
    .unwrap();
    let target = Target {
        endpoint: "e".into(),
        clock: "c".into(),
        expectations: None,
        filter: None,
        time_scale: None,
        containers: None,
    };
    let report = Report::new(target, &cases, &runs, Some(&previous));
    assert_eq!(
        crate::common::case(&report, "E1.1").status,
        Status::UnexpectedPass
    );
    assert_eq!(crate::common::case(&report, "E3.1").status, Status::Failed);
    assert_eq!(
        crate::common::case(&report, "E3.3").status,
        Status::ExpectedFailure
    );
    assert!(report.failed());
    let regenerated = Expectations::from_report(&report, Some(&previous), "x 1.0", "test");
    let listed: Vec<(&str, &str)> = regenerated
        .failures
        .iter()
        .map(|f| (f.id.as_str(), f.reason.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "E3.1",
                "observed: @1000 read a: expected absent, observed visible (message: m)"
            ),
            ("E3.3", "no TTL"),
            ("L8.1", "boundary"),
        ]
    );
    // The written file reads back the same.
    assert_eq!(
        Expectations::parse(&regenerated.to_toml()).unwrap(),
        regenerated
    );
}

#[rstest]
#[case::scaled(1000, 0.002, json!(2))]
#[case::at_least_one_second(100, 0.002, json!(1))]
#[case::max_is_not_scaled(2147483647, 0.002, json!(2147483647))]
#[case::too_large_is_not_scaled(2147483648u64, 0.002, json!(2147483648u64))]
fn wall_clock_ttl_scaling(#[case] value: u64, #[case] scale: f64, #[case] sent: Value) {
    assert_eq!(WallClock::new(scale).unwrap().ttl(&json!(value)), sent);
}

#[rstest]
#[case::minus_one(json!(-1))]
#[case::zero(json!(0))]
#[case::fraction(json!(1.5))]
#[case::string(json!("1000"))]
#[case::null(json!(null))]
fn wall_clock_leaves_special_and_invalid_values_alone(#[case] value: Value) {
    assert_eq!(WallClock::new(0.002).unwrap().ttl(&value), value);
}

#[rstest]
#[case::coarse_scale_skips_e3_1(0.002, "E3.1", &[500, 1500])]
#[case::fine_enough_scale_observes_e3_1(0.004, "E3.1", &[])]
#[case::boundary_never_observable(0.05, "L8.1", &[999, 1000])]
#[case::boundary_of_ttl_1(0.5, "L8.4", &[0, 0, 1])]
#[case::e3_3_needs_more_than_e3_1(0.002, "E3.3", &[1500])]
fn wall_clock_observability(#[case] scale: f64, #[case] id: &str, #[case] unobservable: &[u64]) {
    let case = cases(&[id]).remove(0);
    let wall = WallClock::new(scale).unwrap();
    let found: Vec<u64> = unobservable::steps(&wall, &case)
        .iter()
        .map(|u| u.at)
        .collect();
    assert_eq!(found, unobservable);
}

#[test]
fn a_time_scale_must_be_positive() {
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(WallClock::new(scale).is_err(), "{scale}");
    }
}

#[test]
fn the_signature_matches_a_known_answer() {
    // Computed independently: printf 'get\ndbs\ndbs/ToDoList\nthu, 27 apr 2017 00:51:12 gmt\n\n'
    //   | openssl dgst -sha256 -mac HMAC -macopt hexkey:<the key, base64-decoded> -binary | base64
    let key = base64_decode(WELL_KNOWN_KEY);
    let header = authorization(
        &key,
        "GET",
        "dbs",
        "dbs/ToDoList",
        "Thu, 27 Apr 2017 00:51:12 GMT",
    );
    assert_eq!(
        header,
        "type%3Dmaster%26ver%3D1.0%26sig%3DmM0rMK%2F7o1MZhQwDitGRoGisPRPx09os%2F86Jk0YwquY%3D"
    );
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

#[rstest]
#[case::azure(
    "AccountEndpoint=https://x.documents.azure.com:443/;AccountKey=abc==;",
    "https://x.documents.azure.com:443/",
    "abc=="
)]
#[case::any_order_and_case(
    "accountkey=k=;AccountEndpoint=http://127.0.0.1:8081",
    "http://127.0.0.1:8081",
    "k="
)]
fn connection_strings_parse(#[case] text: &str, #[case] endpoint: &str, #[case] key: &str) {
    assert_eq!(
        Credentials::from_connection_string(text).unwrap(),
        Credentials {
            endpoint: endpoint.into(),
            key: key.into()
        }
    );
}

#[test]
fn a_connection_string_without_a_key_is_refused() {
    assert!(
        Credentials::from_connection_string("AccountEndpoint=http://x;")
            .unwrap_err()
            .contains("AccountKey")
    );
}

/// What decides a write step: its status class, except that an upsert's
/// 201 and 200 say whether the item was there (created anew or replaced).
#[rstest]
#[case::created("create a", "201", "201", true, false)]
#[case::replace_answering_201("replace a", "200", "201", true, true)]
#[case::error_without_code("create a", "400 BadRequest", "400 (no error code)", true, true)]
#[case::another_code("create a", "400 BadRequest", "400 Invalid", true, true)]
#[case::garbage_body("create a", "201", "201 (body is not a JSON object)", true, true)]
#[case::accepted_invalid("create a", "400 BadRequest", "201", false, false)]
#[case::not_found_for_accepted("replace a", "200", "404 NotFound", false, false)]
#[case::server_error("create a", "201", "500 InternalServerError", false, false)]
#[case::no_answer("create a", "201", "no answer", false, false)]
#[case::upsert_replacing_what_should_be_gone("upsert a", "201", "200", false, false)]
#[case::upsert_creating_what_should_be_there("upsert a", "200", "201", false, false)]
#[case::read_whole_token("read a", "visible", "absent", false, false)]
fn a_step_is_decided_by_its_ttl_part(
    #[case] label: &str,
    #[case] expected: &str,
    #[case] observed: &str,
    #[case] ttl_passes: bool,
    #[case] protocol_note: bool,
) {
    let step = StepOutcome {
        at: 0,
        label: label.into(),
        expected: expected.into(),
        observed: observed.into(),
        detail: None,
    };
    assert_eq!(step.ttl_matches(), ttl_passes);
    let run = run(vec![step]);
    assert_eq!(run.protocol_notes().len(), usize::from(protocol_note));
    assert_eq!(run.verdict() == Verdict::Passed, ttl_passes);
}

/// A pretty-printed JSON error body without `code` (cosmium answers
/// `{\n    "message": "Conflict"\n}`) and a service message over several
/// lines both stay on the progress line's one line: the line shows the
/// whole mismatch, not a cut at the body's `{`.
#[test]
fn a_progress_line_shows_a_multi_line_error_on_one_line() {
    let conflict = observe_write(&response(409, "{\n    \"message\": \"Conflict\"\n}"), true);
    assert_eq!(conflict.token, "409 (no error code)");
    assert_eq!(
        conflict.detail.as_deref(),
        Some(r#"body: { "message": "Conflict" }"#)
    );
    let refused = observe_write(
        &response(
            400,
            r#"{"code": "BadRequest", "message": "The input ttl '0' is invalid.\r\nActivityId: 1, Request URI: /dbs/d"}"#,
        ),
        true,
    );
    assert_eq!(
        refused.detail.as_deref(),
        Some("message: The input ttl '0' is invalid.")
    );
    let step = StepOutcome {
        at: 1500,
        label: "create a".into(),
        expected: "201".into(),
        observed: conflict.token,
        detail: conflict.detail,
    };
    let line = cosmos_conformance::report::console::progress_text(&run(vec![step]), None);
    assert_eq!(
        line,
        r#"FAILED (@1500 create a: expected 201, observed 409 (no error code) (body: { "message": "Conflict" }))"#
    );
}
