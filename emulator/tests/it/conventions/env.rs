//! The environment variables of Microsoft's Linux emulator and of its older
//! image, against the binary.

use cosmos_emulator::binary::settings::*;
use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::WELL_KNOWN_KEY;
use serde_json::json;

use super::support::{emulator_command, Scratch};
use super::{free_port, run_to_exit, start};
use crate::common::Api;

/// Another valid key (base64 of 32 bytes).
const OTHER_KEY: &str = "b3RoZXIta2V5LWZvci10aGUtZW11bGF0b3ItdGVzdHM=";

fn with_key(api: &Api, key: &str) -> Api {
    Api::new(
        api.endpoint().to_string(),
        MasterKey::from_base64(key).unwrap(),
        reqwest::blocking::Client::new(),
    )
}

/// The port of `http://host:port`.
fn port_of(endpoint: &str) -> u16 {
    endpoint.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn port_sets_the_port_and_the_flag_beats_it() {
    let scratch = Scratch::new("env-port");
    let port = free_port();
    let emu = start(&scratch, &[], &[(PORT, &port.to_string())]);
    assert_eq!(emu.api.endpoint(), format!("http://localhost:{port}"));
    assert_eq!(emu.api.get("/", &[]).status, 200);
    drop(emu);
    let other = free_port();
    let emu = start(
        &scratch,
        &["--port", &other.to_string()],
        &[(PORT, &port.to_string())],
    );
    assert_eq!(port_of(emu.api.endpoint()), other);
}

#[test]
fn protocol_https_serves_tls_with_the_certificate_made_at_start() {
    let scratch = Scratch::new("env-protocol");
    for protocol in ["https", "https-insecure", "HTTPS"] {
        let pem = scratch.root.join(format!("{protocol}.pem"));
        let emu = start(
            &scratch,
            &["--port", "0", "--cert-out", pem.to_str().unwrap()],
            &[(PROTOCOL, protocol)],
        );
        assert!(
            emu.api.endpoint().starts_with("https://localhost:"),
            "{protocol}: {}",
            emu.api.endpoint()
        );
        let certificate = std::fs::read(&pem).unwrap();
        let trusting = reqwest::blocking::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(&certificate).unwrap()])
            .build()
            .unwrap();
        let api = Api::new(
            emu.api.endpoint().to_string(),
            MasterKey::from_base64(WELL_KNOWN_KEY).unwrap(),
            trusting,
        );
        assert_eq!(api.get("/", &[]).status, 200, "{protocol}");
    }
    let emu = start(&scratch, &["--port", "0"], &[(PROTOCOL, "http")]);
    assert!(emu.api.endpoint().starts_with("http://"));
    // The flag beats the variable.
    let emu = start(
        &scratch,
        &["--port", "0", "--protocol", "http"],
        &[(PROTOCOL, "https")],
    );
    assert!(emu.api.endpoint().starts_with("http://"));
}

/// One way to set the key: the flags and variables, the key requests must
/// then be signed with, and one they must not.
struct KeyCase<'a> {
    args: &'a [&'a str],
    vars: &'a [(&'a str, &'a str)],
    right: &'a str,
    wrong: &'a str,
}

#[test]
fn key_file_and_the_key_variable_change_the_key_requests_are_signed_with() {
    let scratch = Scratch::new("env-key");
    let key_file = scratch.root.join("key");
    std::fs::write(&key_file, format!("{OTHER_KEY}\n")).unwrap();
    let key_file = key_file.to_str().unwrap();
    let cases = [
        KeyCase {
            args: &[],
            vars: &[(KEY_FILE, key_file)],
            right: OTHER_KEY,
            wrong: WELL_KNOWN_KEY,
        },
        KeyCase {
            args: &[],
            vars: &[(KEY, OTHER_KEY)],
            right: OTHER_KEY,
            wrong: WELL_KNOWN_KEY,
        },
        // A flag beats both variables.
        KeyCase {
            args: &["--key", WELL_KNOWN_KEY],
            vars: &[(KEY_FILE, key_file), (KEY, OTHER_KEY)],
            right: WELL_KNOWN_KEY,
            wrong: OTHER_KEY,
        },
        KeyCase {
            args: &["--key-file", key_file],
            vars: &[(KEY, WELL_KNOWN_KEY)],
            right: OTHER_KEY,
            wrong: WELL_KNOWN_KEY,
        },
    ];
    for KeyCase {
        args,
        vars,
        right,
        wrong,
    } in cases
    {
        let mut all = vec!["--port", "0"];
        all.extend_from_slice(args);
        let emu = start(&scratch, &all, vars);
        let create = |key: &str| {
            with_key(&emu.api, key)
                .post("/dbs", &json!({"id": format!("db-{}", &key[..4])}), &[])
                .status
        };
        assert_eq!(
            create(wrong),
            401,
            "{args:?} {vars:?}: the other key is refused"
        );
        assert_eq!(
            create(right),
            201,
            "{args:?} {vars:?}: the configured key is accepted"
        );
    }
}

#[test]
fn partition_count_gives_new_containers_that_many_ranges() {
    let scratch = Scratch::new("env-partitions");
    for (args, vars, expected) in [
        (&["--port", "0"][..], &[(PARTITION_COUNT, "3")][..], 3),
        (
            &["--port", "0", "--ranges-per-container", "2"],
            &[(PARTITION_COUNT, "3")],
            2,
        ),
    ] {
        let emu = start(&scratch, args, vars);
        emu.api.create_db_and_container(json!({}));
        let reply = emu.api.get("/dbs/db/colls/c/pkranges", &[]);
        let ranges = emu.api.ok(reply)["PartitionKeyRanges"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(ranges, expected, "{args:?} {vars:?}");
    }
}

#[test]
fn data_path_keeps_the_data_across_a_restart() {
    let scratch = Scratch::new("env-data-path");
    let data = scratch.data();
    let vars = [(DATA_PATH, data.to_str().unwrap())];
    let mut emu = start(&scratch, &["--port", "0"], &vars);
    emu.api.create_db_and_container(json!({}));
    emu.terminate();
    assert!(
        data.join("LOCK").exists(),
        "DATA_PATH is the data directory"
    );
    let emu = start(&scratch, &["--port", "0"], &vars);
    assert_eq!(emu.api.get("/dbs/db/colls/c", &[]).status, 200);
}

#[test]
fn enable_data_persistence_keeps_the_data_in_the_user_data_directory() {
    let scratch = Scratch::new("env-persistence");
    let xdg = scratch.root.join("xdg");
    let vars = [
        (ENABLE_DATA_PERSISTENCE, "true"),
        ("XDG_DATA_HOME", xdg.to_str().unwrap()),
    ];
    let mut emu = start(&scratch, &["--port", "0"], &vars);
    emu.api.create_db_and_container(json!({}));
    emu.terminate();
    assert!(
        xdg.join("cosmos-emulator").join("LOCK").exists(),
        "{}",
        emu.stderr()
    );
    let emu = start(&scratch, &["--port", "0"], &vars);
    assert_eq!(emu.api.get("/dbs/db/colls/c", &[]).status, 200);
    // Without it, the same environment keeps nothing.
    let emu = start(
        &scratch,
        &["--port", "0"],
        &[("XDG_DATA_HOME", xdg.to_str().unwrap())],
    );
    assert_eq!(emu.api.get("/dbs/db/colls/c", &[]).status, 404);
}

#[test]
fn the_ip_override_is_the_host_the_account_document_advertises() {
    let scratch = Scratch::new("env-ip");
    let advertised = |args: &[&str], vars: &[(&str, &str)]| {
        let emu = start(&scratch, args, vars);
        let port = port_of(emu.api.endpoint());
        let account = emu.api.ok(emu.api.get("/", &[]));
        let writable = account["writableLocations"][0]["databaseAccountEndpoint"].clone();
        assert_eq!(
            account["readableLocations"][0]["databaseAccountEndpoint"],
            writable
        );
        (writable.as_str().unwrap().to_string(), port)
    };
    let (endpoint, port) = advertised(&["--port", "0"], &[(IP_ADDRESS_OVERRIDE, "10.20.30.40")]);
    assert_eq!(endpoint, format!("http://10.20.30.40:{port}/"));
    let (endpoint, port) = advertised(&["--port", "0"], &[(IP_ADDRESS_OVERRIDE, "fd00::7")]);
    assert_eq!(endpoint, format!("http://[fd00::7]:{port}/"));
    let (endpoint, port) = advertised(
        &["--port", "0", "--advertise-host", "cosmos.test"],
        &[(IP_ADDRESS_OVERRIDE, "10.20.30.40")],
    );
    assert_eq!(endpoint, format!("http://cosmos.test:{port}/"));
    // Without it, the host the client addressed.
    let (endpoint, port) = advertised(&["--port", "0"], &[]);
    assert_eq!(endpoint, format!("http://127.0.0.1:{port}/"));
}

#[test]
fn log_level_sets_the_verbosity_and_rust_log_beats_it() {
    let scratch = Scratch::new("env-log");
    let mut quiet = start(&scratch, &["--port", "0"], &[(LOG_LEVEL, "QUIET")]);
    quiet.terminate();
    assert_eq!(quiet.stderr(), "", "quiet logs nothing");
    let mut info = start(
        &scratch,
        &["--port", "0"],
        &[(LOG_LEVEL, "quiet"), (RUST_LOG, "info")],
    );
    info.terminate();
    assert!(info.stderr().contains("serving"), "{}", info.stderr());
    let mut flag = start(
        &scratch,
        &["--port", "0", "--log-level", "quiet"],
        &[(RUST_LOG, "info")],
    );
    flag.terminate();
    assert_eq!(flag.stderr(), "");
}

#[test]
fn telemetry_is_accepted_and_said_to_be_off() {
    let scratch = Scratch::new("env-telemetry");
    let mut emu = start(&scratch, &["--port", "0"], &[(ENABLE_TELEMETRY, "true")]);
    emu.terminate();
    assert!(emu.stderr().contains("sends none"), "{}", emu.stderr());
    let emu = start(
        &scratch,
        &["--port", "0", "--enable-telemetry", "false"],
        &[(ENABLE_TELEMETRY, "x")],
    );
    assert_eq!(emu.api.get("/", &[]).status, 200);
}

#[test]
fn an_invalid_value_stops_the_start_with_exit_code_2_naming_the_variable() {
    let scratch = Scratch::new("env-invalid");
    let not_base64 = scratch.root.join("not-base64");
    std::fs::write(&not_base64, "this is not base64!").unwrap();
    let missing = scratch.root.join("missing");
    let cases = [
        (PORT, "eighty"),
        (PORT, "65536"),
        (PROTOCOL, "ftp"),
        (KEY_FILE, missing.to_str().unwrap()),
        (KEY_FILE, not_base64.to_str().unwrap()),
        (KEY, "not base64!"),
        (PARTITION_COUNT, "0"),
        (PARTITION_COUNT, "1001"),
        (ENABLE_DATA_PERSISTENCE, "perhaps"),
        (ENABLE_EXPLORER, "yes"),
        (ENABLE_TELEMETRY, "2"),
        (LOG_LEVEL, "verbose"),
        (IP_ADDRESS_OVERRIDE, "not-an-ip"),
    ];
    for (name, value) in cases {
        let mut command = emulator_command();
        // No --port: PORT is read. Where PORT is not the case, a free port.
        if name != PORT {
            command.env(PORT, "0");
        }
        command.env(name, value);
        let output = run_to_exit(command);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}={value}: {stderr}");
        assert!(stderr.contains(name), "{name}={value}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}={value}: {stderr}");
        assert!(output.stdout.is_empty(), "{name}={value}: nothing served");
    }
    // Two variables that disagree.
    let key_file = scratch.root.join("key");
    std::fs::write(&key_file, OTHER_KEY).unwrap();
    let mut command = emulator_command();
    command
        .args(["--port", "0"])
        .env(KEY_FILE, &key_file)
        .env(KEY, WELL_KNOWN_KEY);
    let output = run_to_exit(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(KEY_FILE) && stderr.contains(KEY),
        "{stderr}"
    );
}

#[test]
fn the_default_data_dir_persists_unless_persistence_is_turned_off() {
    let scratch = Scratch::new("env-default-dir");
    let data = scratch.data();
    let default = [(COSMOS_EMULATOR_DEFAULT_DATA_DIR, data.to_str().unwrap())];
    let mut emu = start(&scratch, &["--port", "0"], &default);
    emu.api.create_db_and_container(json!({}));
    emu.terminate();
    assert!(data.join("LOCK").exists(), "{}", emu.stderr());
    assert!(
        emu.stderr().contains(COSMOS_EMULATOR_DEFAULT_DATA_DIR),
        "the choice is logged: {}",
        emu.stderr()
    );
    let emu = start(&scratch, &["--port", "0"], &default);
    assert_eq!(emu.api.get("/dbs/db/colls/c", &[]).status, 200);
    drop(emu);
    // What Testcontainers for Python sends when its user asked for nothing.
    let mut python = default.to_vec();
    python.extend([
        (PARTITION_COUNT, "None"),
        (ENABLE_DATA_PERSISTENCE, "False"),
        (KEY, WELL_KNOWN_KEY),
        (IP_ADDRESS_OVERRIDE, "127.0.0.1"),
    ]);
    let mut emu = start(&scratch, &["--port", "0"], &python);
    assert_eq!(
        emu.api.get("/dbs/db/colls/c", &[]).status,
        404,
        "memory only: the default directory is not read"
    );
    emu.api.create_db_and_container(json!({}));
    let reply = emu.api.get("/dbs/db/colls/c/pkranges", &[]);
    let ranges = emu.api.ok(reply)["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(ranges, 1, "None is no partition count");
    emu.terminate();
    assert!(emu.stderr().contains("memory only"), "{}", emu.stderr());
}

#[test]
fn the_own_variables_reach_the_binary_and_disagreeing_aliases_stop_it() {
    let scratch = Scratch::new("env-own");
    let port = free_port();
    let emu = start(
        &scratch,
        &[],
        &[
            (COSMOS_EMULATOR_PORT, &port.to_string()),
            (COSMOS_EMULATOR_CLOCK, "manual"),
            (COSMOS_EMULATOR_CLOCK_START, "1234567890"),
        ],
    );
    assert_eq!(emu.api.endpoint(), format!("http://localhost:{port}"));
    assert_eq!(emu.api.now(), 1_234_567_890);
    drop(emu);
    let mut command = emulator_command();
    command.env(COSMOS_EMULATOR_PORT, "0").env(PORT, "1");
    let output = run_to_exit(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(COSMOS_EMULATOR_PORT) && stderr.contains("PORT=\"1\""),
        "{stderr}"
    );
}

#[test]
fn the_configuration_page_names_every_variable() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/src/configuration.md"
    ))
    .unwrap();
    for name in VARIABLES {
        assert!(page.contains(&format!("`{name}`")), "{name}");
    }
}
