//! The binary as a CI gate: its exit status and console against targets
//! that cannot be used (dead port, refused key, TLS failure), that fail the
//! setup of every case, that fail as listed or not, and its --snapshot and
//! --list. Each test runs the real `cosmos-conformance` binary.

use crate::common::NoTtl;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use wiremock::matchers::{any, method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the binary from a fresh directory (nothing of the source tree
/// around it), with its reports there too.
async fn gate(dir: &Path, args: &[&str]) -> Outcome {
    let dir = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let output = Command::new(env!("CARGO_BIN_EXE_cosmos-conformance"))
            .args(&args)
            .args(["--request-timeout", "3"])
            .current_dir(&dir)
            .env_remove("COSMOS_ENDPOINT")
            .env_remove("COSMOS_KEY")
            .env_remove("COSMOS_CONNECTION_STRING")
            .output()
            .expect("the binary runs");
        Outcome {
            code: output.status.code().expect("an exit code"),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    })
    .await
    .unwrap()
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gate-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The fake without TTL, answering the account read like a Cosmos endpoint.
async fn no_ttl_target() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "fake"})))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(NoTtl::default())
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_port_does_not_start_the_run_even_with_expectations() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = temp_dir();
    let endpoint = format!("http://127.0.0.1:{port}");
    let out = gate(
        &dir,
        &[
            "--endpoint",
            &endpoint,
            "--expectations",
            "vercel-cosmosdb-server",
            "--filter",
            "indexing",
        ],
    )
    .await;
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("the endpoint is unreachable"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("ok: nothing failed"), "{}", out.stdout);
    assert!(!dir.join("target/conformance/report.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_does_not_start_the_run_and_quotes_the_server() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "code": "Unauthorized",
            "message": "The input authorization token can't serve the request."
        })))
        .mount(&server)
        .await;
    let out = gate(&temp_dir(), &["--endpoint", &server.uri()]).await;
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("refused the key: the account read answered 401")
            && out.stderr.contains("can't serve the request"),
        "{}",
        out.stderr
    );
    // Nothing but the account read was sent: no database was created.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_plain_http_server_is_a_tls_failure() {
    let server = no_ttl_target().await;
    let endpoint = server.uri().replace("http://", "https://");
    let out = gate(&temp_dir(), &["--endpoint", &endpoint]).await;
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("TLS failure"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_is_a_tls_failure_and_insecure_accepts_it() {
    let emulator = cosmos_emulator::Emulator::start(cosmos_emulator::Config {
        port: 0,
        protocol: cosmos_emulator::Protocol::Https,
        ..cosmos_emulator::Config::for_tests()
    })
    .expect("the emulator starts with TLS");
    let endpoint = emulator.endpoint().to_string();
    assert!(endpoint.starts_with("https://"), "{endpoint}");
    let out = gate(&temp_dir(), &["--endpoint", &endpoint, "--filter", "E1.1"]).await;
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("TLS failure") && out.stderr.contains("certificate"),
        "{}",
        out.stderr
    );
    let out = gate(
        &temp_dir(),
        &["--endpoint", &endpoint, "--insecure", "--filter", "E1.1"],
    )
    .await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// Every case's container creation fails: nothing runs, so nothing can be
/// an expected failure, listed or not.
#[tokio::test(flavor = "multi_thread")]
async fn a_setup_failure_on_every_case_fails_the_run_with_or_without_expectations() {
    let server = no_ttl_target().await;
    Mock::given(method("POST"))
        .and(path_regex("^/dbs/[^/]+/colls$"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_json(json!({"code": "InternalServerError", "message": "no"})),
        )
        .with_priority(2)
        .mount(&server)
        .await;
    let dir = temp_dir();
    let ids = ["E1.1", "E3.1", "L9.item-create.zero"];
    let mut list = String::from("implementation = \"fake\"\n");
    for id in ids {
        list.push_str(&format!(
            "[[failure]]\nid = \"{id}\"\nreason = \"broken\"\n"
        ));
    }
    let list = write(&dir, "fake.toml", &list);
    let filter = ids.join(",");
    let uri = server.uri();
    for expectations in [None, Some(list.as_str())] {
        let mut args = vec!["--endpoint", &uri, "--filter", &filter];
        if let Some(list) = expectations {
            args.extend(["--expectations", list]);
        }
        let out = gate(&dir, &args).await;
        assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
        assert!(!out.stderr.contains("expected failure"), "{}", out.stderr);
        assert_eq!(
            out.stderr.matches("ERROR (").count(),
            3,
            "one error line per case: {}",
            out.stderr
        );
        if expectations.is_some() {
            assert!(out.stderr.contains("ERROR (listed, but did not run to the end: creating the case's container answered 500"), "{}", out.stderr);
        }
        assert!(
            out.stdout.contains("FAILED: a case failed"),
            "{}",
            out.stdout
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn listed_failures_that_fail_as_listed_pass_the_gate_and_say_so() {
    let server = no_ttl_target().await;
    let dir = temp_dir();
    let list = write(
        &dir,
        "fake.toml",
        "implementation = \"fake\"\n[[failure]]\nid = \"E3.1\"\nreason = \"never expires\"\n\
         mismatches = [\"@1500 read a: expected absent, observed visible\"]\n",
    );
    let args = [
        "--endpoint",
        &server.uri(),
        "--filter",
        "E1.1,E3.1",
        "--expectations",
        &list,
    ];
    let out = gate(&dir, &args).await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("E3.1 expected failure (never expires)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("E1.1 ok"), "{}", out.stderr);
    assert!(!out.stderr.contains("FAILED"), "{}", out.stderr);
    for report in ["json", "xml", "md", "html"] {
        assert!(dir
            .join(format!("target/conformance/report.{report}"))
            .is_file());
    }

    // Listed as failing in another way: the gate closes.
    let other = write(
        &dir,
        "other.toml",
        "implementation = \"fake\"\n[[failure]]\nid = \"E3.1\"\nreason = \"never expires\"\n\
         mismatches = [\"@0 create a: expected 201, observed 400\"]\n",
    );
    let args = [
        "--endpoint",
        &server.uri(),
        "--filter",
        "E3.1",
        "--expectations",
        &other,
    ];
    let out = gate(&dir, &args).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("E3.1 FAILS DIFFERENTLY"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("fails differently"), "{}", out.stdout);

    // Listed but passing: an unexpected pass fails the run.
    let passing = write(
        &dir,
        "passing.toml",
        "implementation = \"fake\"\n[[failure]]\nid = \"E1.1\"\nreason = \"thought broken\"\n",
    );
    let args = [
        "--endpoint",
        &server.uri(),
        "--filter",
        "E1.1",
        "--expectations",
        &passing,
    ];
    let out = gate(&dir, &args).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("E1.1 unexpected pass (listed: thought broken)"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_is_written_then_matched_then_a_change_fails_with_a_pending_file() {
    let server = no_ttl_target().await;
    let dir = temp_dir();
    let snap = dir.join("snapshots/fake.snap");
    let snap_arg = snap.display().to_string();
    let args = [
        "--endpoint",
        &server.uri(),
        "--filter",
        "E1.1",
        "--snapshot",
        &snap_arg,
    ];
    let out = gate(&dir, &args).await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("snapshot: wrote"), "{}", out.stdout);
    let written = insta::Snapshot::from_file(&snap).expect("insta reads the snapshot");
    assert_eq!(
        written.contents().as_text().unwrap().to_string(),
        "E1.1 passed\n    @0 create a: 201\n    @0 read a: visible\n    @3000 read a: visible"
    );

    let out = gate(&dir, &args).await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("matches"), "{}", out.stdout);

    // A committed snapshot that says otherwise: the run fails, with a diff
    // and the pending FILE.new that insta's review tools read.
    let text = std::fs::read_to_string(&snap).unwrap();
    std::fs::write(
        &snap,
        text.replace("@3000 read a: visible", "@3000 read a: absent"),
    )
    .unwrap();
    let out = gate(&dir, &args).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("-    @3000 read a: absent")
            && out.stdout.contains("+    @3000 read a: visible"),
        "{}",
        out.stdout
    );
    let pending = dir.join("snapshots/fake.snap.new");
    let pending = insta::Snapshot::from_file(&pending).expect("a pending snapshot");
    assert!(pending
        .contents()
        .as_text()
        .unwrap()
        .to_string()
        .contains("@3000 read a: visible"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_lists_its_built_in_cases_from_any_directory() {
    let out = gate(&temp_dir(), &["--list"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        crate::common::all_cases().len() + 1,
        "{}",
        out.stdout
    );
    assert!(lines.iter().any(|l| l.starts_with("E3.1 ")
        && l.contains("examples")
        && l.contains("E3.1,R2,R3")
        && l.contains("defaultTtl 1000, ttl null")));
    // A built-in expectations list is found by name without the source tree.
    let out = gate(
        &temp_dir(),
        &[
            "--endpoint",
            "http://127.0.0.1:9",
            "--expectations",
            "no-such-list",
        ],
    )
    .await;
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("(built in: cosmium, cosmos-emulator, vercel-cosmosdb-server"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_list_written_from_a_run_gates_the_next_run() {
    let server = no_ttl_target().await;
    let dir = temp_dir();
    // In a directory that does not exist yet, as in a new project.
    let list = dir
        .join("conformance")
        .join("mine.toml")
        .display()
        .to_string();
    let uri = server.uri();
    let first = [
        "--endpoint",
        &uri,
        "--filter",
        "E1.1,E3.1",
        "--write-expectations",
        &list,
    ];
    let out = gate(&dir, &first).await;
    assert_eq!(out.code, 1, "the first run fails on E3.1: {}", out.stdout);
    let written = std::fs::read_to_string(&list).unwrap();
    assert!(written.contains("id = \"E3.1\""), "{written}");
    assert!(!written.contains("E1.1"), "{written}");
    assert!(
        written.contains("mismatches = [\"@1500 read a: expected absent, observed visible\"]"),
        "{written}"
    );
    let second = [
        "--endpoint",
        &uri,
        "--filter",
        "E1.1,E3.1",
        "--expectations",
        &list,
    ];
    let out = gate(&dir, &second).await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("E3.1 expected failure (observed: @1500 read a"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn asking_for_a_test_clock_the_target_lacks_does_not_start_the_run() {
    let server = no_ttl_target().await;
    Mock::given(path("/_emulator/clock"))
        .respond_with(ResponseTemplate::new(404))
        .with_priority(1)
        .mount(&server)
        .await;
    let out = gate(
        &temp_dir(),
        &[
            "--endpoint",
            &server.uri(),
            "--clock",
            "manual",
            "--filter",
            "E1.1",
        ],
    )
    .await;
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("has no test clock"), "{}", out.stderr);
}
