//! Endpoints that misbehave must make the matching cases fail with a clear
//! message: never a pass, a panic or a hang.

use crate::common::{all_cases, assert_case, case, cases, config, run, NoTtl};
use cosmos_conformance::report::Status;
use serde_json::json;
use std::time::Duration;
use wiremock::matchers::{any, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const LIMIT: Duration = Duration::from_secs(60);

async fn no_ttl_server(without_clock: bool) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(NoTtl {
            without_clock,
            ..NoTtl::default()
        })
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_target_that_never_expires_fails_every_expiring_case_and_only_those() {
    let server = no_ttl_server(false).await;
    let report = run(&config(&server.uri()), &all_cases(), LIMIT).await;
    // Cases where nothing expires pass: the fake stores items faithfully.
    for id in [
        "E1.1",
        "E1.2",
        "E1.3",
        "E2.1",
        "E2.2",
        "E3.2",
        "M1.1",
        "M1.1-null",
        "M2.1",
        "M3.1",
        "M3.1-null",
        "R11",
    ] {
        assert_eq!(case(&report, id).status, Status::Passed, "{id}");
    }
    // Every case where something should expire fails, naming the step.
    for id in [
        "E2.3", "E3.1", "E3.3", "M1.3", "M3.2", "M3.3", "L1.1", "L4", "L8.1", "L8.4", "L10.1",
        "L11.1",
    ] {
        assert_case(
            &report,
            id,
            Status::Failed,
            "expected absent, observed visible",
        );
    }
    assert_case(
        &report,
        "E3.1",
        Status::Failed,
        "@1500 read a: expected absent, observed visible",
    );
    assert_case(
        &report,
        "R5.count",
        Status::Failed,
        "expected [2], observed [3]",
    );
    assert_case(
        &report,
        "L8.5",
        Status::Failed,
        "@1000 query `SELECT * FROM c`: expected [], observed [a]",
    );
    assert!(report.failed());
    // The runner deletes what it created: its database.
    let requests = server.received_requests().await.unwrap();
    assert!(requests.iter().any(|r| r.method.as_str() == "DELETE"
        && r.url.path().starts_with("/dbs/conformance-")
        && !r.url.path().contains("/colls")));
}

#[tokio::test]
async fn a_target_that_accepts_invalid_values_fails_the_validation_cases() {
    let server = no_ttl_server(false).await;
    let report = run(&config(&server.uri()), &all_cases(), LIMIT).await;
    for value in [
        "zero",
        "minus-two",
        "fraction",
        "string",
        "too-large",
        "null",
    ] {
        assert_case(
            &report,
            &format!("L9.item-create.{value}"),
            Status::Failed,
            "expected 400 BadRequest, observed 201",
        );
        assert_case(
            &report,
            &format!("L9.item-replace.{value}"),
            Status::Failed,
            "expected 400 BadRequest, observed 200",
        );
    }
    for value in ["zero", "minus-two", "fraction", "string", "too-large"] {
        assert_case(
            &report,
            &format!("L9.container-create.{value}"),
            Status::Failed,
            "expected 400 BadRequest, observed 201",
        );
        assert_case(
            &report,
            &format!("L9.container-replace.{value}"),
            Status::Failed,
            "expected 400 BadRequest, observed 200",
        );
    }
    assert_case(
        &report,
        "R10.1",
        Status::Failed,
        "expected 400 BadRequest, observed 201",
    );
    // Accepting valid values is right, even for a target without TTL.
    for id in [
        "L9.item-create.max",
        "L9.container-create.max",
        "L9.container-create.minus-one",
        "L9.container-replace.minus-one",
    ] {
        assert_eq!(case(&report, id).status, Status::Passed, "{id}");
    }
}

#[tokio::test]
async fn a_target_answering_500_fails_with_the_status_and_code() {
    let server = no_ttl_server(false).await;
    Mock::given(path_regex("/docs"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_json(json!({"code": "InternalServerError", "message": "boom"})),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    let report = run(
        &config(&server.uri()),
        &cases(&["E1.1", "E3.1", "L9.item-create.zero"]),
        LIMIT,
    )
    .await;
    assert_case(
        &report,
        "E1.1",
        Status::Failed,
        "@0 create a: expected 201, observed 500 InternalServerError (message: boom)",
    );
    assert_case(
        &report,
        "E3.1",
        Status::Failed,
        "observed 500 InternalServerError",
    );
    assert_case(
        &report,
        "L9.item-create.zero",
        Status::Failed,
        "expected 400 BadRequest, observed 500 InternalServerError",
    );
}

#[tokio::test]
async fn a_target_answering_garbage_fails_with_the_body_quoted() {
    let server = no_ttl_server(false).await;
    Mock::given(path_regex("/docs"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>not json{"))
        .with_priority(1)
        .mount(&server)
        .await;
    let report = run(
        &config(&server.uri()),
        &cases(&["E1.1", "R5.select"]),
        LIMIT,
    )
    .await;
    assert_case(
        &report,
        "E1.1",
        Status::Failed,
        "expected 201, observed 200 (body is not a JSON object) (body: <html>not json{)",
    );
    assert_case(
        &report,
        "E1.1",
        Status::Failed,
        "@0 read a: expected visible, observed 200 (body is not a JSON object)",
    );
    assert_case(
        &report,
        "R5.select",
        Status::Failed,
        "expected [a, b, c], observed 200 (no Documents array)",
    );
}

#[tokio::test]
async fn a_test_clock_answering_garbage_fails_every_case_with_the_reason() {
    let server = no_ttl_server(false).await;
    Mock::given(path("/_emulator/clock"))
        .respond_with(ResponseTemplate::new(200).set_body_string("tick"))
        .with_priority(1)
        .mount(&server)
        .await;
    let report = run(&config(&server.uri()), &cases(&["E1.1", "E3.1"]), LIMIT).await;
    for id in ["E1.1", "E3.1"] {
        assert_case(
            &report,
            id,
            Status::Failed,
            "/_emulator/clock answered 200 without {\"now\": <seconds>}: tick",
        );
    }
}

#[tokio::test]
async fn a_target_rejecting_the_signature_fails_every_case() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"code": "Unauthorized", "message": "The input authorization token can't serve the request."})))
        .mount(&server)
        .await;
    let all = all_cases();
    let report = run(&config(&server.uri()), &all, LIMIT).await;
    assert_eq!(report.summary.failed, all.len());
    assert_case(
        &report,
        "E1.1",
        Status::Failed,
        "creating database conformance-",
    );
    assert_case(
        &report,
        "E3.3",
        Status::Failed,
        "answered 401 Unauthorized: The input authorization token",
    );
}

#[tokio::test]
async fn a_target_that_hangs_fails_on_the_request_timeout() {
    let server = no_ttl_server(false).await;
    Mock::given(path_regex("/docs"))
        .respond_with(ResponseTemplate::new(201).set_delay(Duration::from_secs(30)))
        .with_priority(1)
        .mount(&server)
        .await;
    let mut config = config(&server.uri());
    config.request_timeout = Duration::from_millis(500);
    let started = std::time::Instant::now();
    let report = run(&config, &cases(&["E1.1", "E3.1"]), Duration::from_secs(20)).await;
    assert_case(&report, "E1.1", Status::Failed, "timed out");
    // The case stops at the first unanswered step instead of waiting on each.
    assert!(case(&report, "E3.1")
        .observed
        .contains("@0 create a: no answer; @0 read a: not run"));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_unreachable_target_fails_every_case() {
    // A port that was free a moment ago and has no listener now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let uri = format!("http://127.0.0.1:{port}");
    let report = run(&config(&uri), &cases(&["E1.1"]), LIMIT).await;
    assert_case(&report, "E1.1", Status::Failed, "cannot connect");
}

/// On the wall clock, checkpoints too near an expiry instant are skipped,
/// and the observable ones still catch a target that never expires.
#[tokio::test]
async fn on_the_wall_clock_a_target_that_never_expires_fails_and_boundaries_are_skipped() {
    let server = no_ttl_server(true).await;
    let mut config = config(&server.uri());
    // 1000 fixture seconds become 4 s: E3.1 reads at 2 s and 6 s, 2 s away
    // from the expiry at 4 s; L8.1's 999 and 1000 cannot be told apart.
    config.time_scale = 0.004;
    let started = std::time::Instant::now();
    let report = run(&config, &cases(&["E3.1", "L8.1"]), Duration::from_secs(30)).await;
    assert!(
        report.target.clock.starts_with("wall"),
        "{}",
        report.target.clock
    );
    assert_eq!(report.target.time_scale, Some(0.004));
    assert_case(
        &report,
        "E3.1",
        Status::Failed,
        "@1500 read a: expected absent, observed visible",
    );
    assert_case(
        &report,
        "L8.1",
        Status::Skipped,
        "not observable on the wall clock at time scale 0.004: @999, @1000",
    );
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(6) && elapsed < Duration::from_secs(15),
        "{elapsed:?}"
    );
    // The TTL sent was scaled: 1000 s became 4 s.
    let requests = server.received_requests().await.unwrap();
    let container = requests
        .iter()
        .find(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/colls"))
        .expect("a container was created");
    let body: serde_json::Value = container.body_json().unwrap();
    assert_eq!(body["defaultTtl"], json!(4));
}

/// Protocol deviations are notes beside the TTL verdict: a 201 for a
/// replace, or a refusal without Cosmos DB's error `code`, does not decide a
/// case; refusing or accepting, visible or absent still does.
#[tokio::test]
async fn protocol_deviations_are_notes_and_the_ttl_verdict_stays_strict() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(CreatedOnReplace(NoTtl::default()))
        .with_priority(10)
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(path_regex("/docs$"))
        .and(wiremock::matchers::body_string_contains("\"ttl\":0"))
        .respond_with(ResponseTemplate::new(400).set_body_string("Bad Request"))
        .with_priority(1)
        .mount(&server)
        .await;
    let report = run(
        &config(&server.uri()),
        &cases(&[
            "L9.item-replace.max",
            "L9.item-create.zero",
            "L9.item-replace.zero",
        ]),
        LIMIT,
    )
    .await;
    let replaced = case(&report, "L9.item-replace.max");
    assert_eq!(replaced.status, Status::Passed, "{replaced:#?}");
    assert_eq!(
        replaced.protocol,
        vec!["@0 replace a: expected 200, observed 201".to_string()]
    );
    let refused = case(&report, "L9.item-create.zero");
    assert_eq!(refused.status, Status::Passed, "{refused:#?}");
    assert!(
        refused.protocol[0]
            .starts_with("@0 create a: expected 400 BadRequest, observed 400 (no error code)"),
        "{:?}",
        refused.protocol
    );
    // Accepting an invalid value is a TTL failure, whatever the status code.
    assert_case(
        &report,
        "L9.item-replace.zero",
        Status::Failed,
        "expected 400 BadRequest, observed 201",
    );
    assert_eq!(
        case(&report, "L9.item-replace.zero").mismatches[0],
        "@0 replace a: expected 400 BadRequest, observed 201"
    );
    assert_eq!(report.summary.protocol_notes, 2);
    // The JUnit report carries them beside a success.
    let junit = cosmos_conformance::report::junit::render(&report);
    assert!(
        junit.contains("protocol: @0 replace a: expected 200, observed 201"),
        "{junit}"
    );
}

/// The fake without TTL, answering 201 instead of 200 to an item replace.
struct CreatedOnReplace(NoTtl);

impl wiremock::Respond for CreatedOnReplace {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let answer = self.0.respond(request);
        if request.method.as_str() == "PUT" && request.url.path().contains("/docs/") {
            let body: serde_json::Value = request.body_json().unwrap_or_default();
            return ResponseTemplate::new(201).set_body_json(body);
        }
        answer
    }
}
