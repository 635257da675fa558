//! Every flag's own `COSMOS_EMULATOR_*` variable, its aliases, the default
//! data directory, and `--help` naming them all.

use std::path::PathBuf;

use super::{ok, refused, resolve_with, OTHER_KEY};
use crate::binary::settings::*;
use crate::data::clock::ClockMode;
use crate::net::transport::Protocol;
use crate::protocol::auth::WELL_KNOWN_KEY;

/// `--clock-start` → `COSMOS_EMULATOR_CLOCK_START`.
fn own_variable(long: &str) -> String {
    format!("COSMOS_EMULATOR_{}", long.replace('-', "_").to_uppercase())
}

#[test]
fn every_flag_has_its_own_variable_first_and_in_variables() {
    let command = command();
    let flags: Vec<&str> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !matches!(*l, "help" | "version"))
        .collect();
    assert_eq!(flags.len(), FLAG_VARIABLES.len(), "{flags:?}");
    for flag in flags {
        let (_, names) = FLAG_VARIABLES
            .iter()
            .find(|(f, _)| *f == flag)
            .unwrap_or_else(|| panic!("--{flag} has no variables"));
        assert_eq!(names[0], own_variable(flag), "--{flag}");
        for name in *names {
            assert!(VARIABLES.contains(name), "{name} in VARIABLES");
        }
    }
    assert!(VARIABLES.contains(&COSMOS_EMULATOR_DEFAULT_DATA_DIR));
}

#[test]
fn the_help_names_each_flags_variables_and_every_variable() {
    let command = command();
    for (flag, names) in FLAG_VARIABLES {
        let arg = command
            .get_arguments()
            .find(|a| a.get_long() == Some(flag))
            .unwrap();
        let help = arg.get_help().unwrap().to_string();
        let env = format!("[env: {}]", names.join(", "));
        assert!(help.ends_with(&env), "--{flag}: {help}");
    }
    let help = command.clone().render_long_help().to_string();
    for name in VARIABLES {
        assert!(help.contains(name), "{name} in\n{help}");
    }
    assert!(help.contains("health"), "the subcommand is listed:\n{help}");
}

#[test]
fn each_own_variable_takes_effect() {
    let s = ok(
        &[],
        &[
            (COSMOS_EMULATOR_HOST, "0.0.0.0"),
            (COSMOS_EMULATOR_PORT, "9001"),
            (COSMOS_EMULATOR_KEY, OTHER_KEY),
            (COSMOS_EMULATOR_CLOCK, "Manual"),
            (COSMOS_EMULATOR_CLOCK_START, "1700000000"),
            (COSMOS_EMULATOR_PROTOCOL, "auto"),
            (COSMOS_EMULATOR_CERT_OUT, "/tmp/out/ca.pem"),
            (COSMOS_EMULATOR_CHANGE_FEED_RETENTION, "60"),
            (COSMOS_EMULATOR_RANGES_PER_CONTAINER, "4"),
            (COSMOS_EMULATOR_DATA_DIR, "/var/d"),
            (COSMOS_EMULATOR_SYNC, "always"),
            (COSMOS_EMULATOR_LOG_LEVEL, "warn"),
            (COSMOS_EMULATOR_ENABLE_EXPLORER, "false"),
            (COSMOS_EMULATOR_ENABLE_TELEMETRY, "true"),
            (COSMOS_EMULATOR_ADVERTISE_HOST, "Cosmos.Test"),
            (COSMOS_EMULATOR_HEALTH_PORT, "8080"),
            (COSMOS_EMULATOR_PARENT_PID, "4242"),
        ],
    );
    let c = &s.config;
    assert_eq!(c.host, "0.0.0.0");
    assert_eq!(c.port, 9001);
    assert_eq!(c.key, OTHER_KEY);
    assert_eq!(
        c.clock,
        ClockMode::Manual {
            start: Some(1_700_000_000)
        }
    );
    assert_eq!(c.protocol, Protocol::Auto);
    assert_eq!(c.cert_out, Some(PathBuf::from("/tmp/out/ca.pem")));
    assert_eq!(c.change_feed_retention, 60);
    assert_eq!(c.min_ranges_per_container, 4);
    assert_eq!(c.data_dir, Some(PathBuf::from("/var/d")));
    assert_eq!(c.sync, crate::data::persist::SyncMode::Always);
    assert_eq!(s.log_filter, "warn");
    assert!(!c.explorer);
    assert!(s.notes.iter().any(|n| n.contains("telemetry")));
    assert_eq!(c.advertise_host.as_deref(), Some("cosmos.test"));
    assert_eq!(s.health_port, Some(8080));
    assert_eq!(s.parent_pid, Some(4242));
    // The remaining two: the key file and --tls's variable.
    let dir = std::env::temp_dir().join(format!("settings-own-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("key");
    std::fs::write(&file, OTHER_KEY).unwrap();
    let s = ok(
        &[],
        &[
            (COSMOS_EMULATOR_KEY_FILE, file.to_str().unwrap()),
            (COSMOS_EMULATOR_TLS, "true"),
        ],
    );
    assert_eq!(s.config.key, OTHER_KEY);
    assert_eq!(s.config.protocol, Protocol::Https);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flags_beat_the_own_variables_which_are_then_not_read() {
    let s = ok(
        &[
            "--host",
            "127.0.0.1",
            "--clock",
            "system",
            "--health-port",
            "9",
            "--parent-pid",
            "7",
            "--change-feed-retention",
            "5",
        ],
        &[
            (COSMOS_EMULATOR_HOST, "not a host"),
            (COSMOS_EMULATOR_CLOCK, "sundial"),
            (COSMOS_EMULATOR_HEALTH_PORT, "x"),
            (COSMOS_EMULATOR_PARENT_PID, "x"),
            (COSMOS_EMULATOR_CHANGE_FEED_RETENTION, "-1"),
        ],
    );
    assert_eq!(s.config.host, "127.0.0.1");
    assert_eq!(s.config.clock, ClockMode::System);
    assert_eq!(s.health_port, Some(9));
    assert_eq!(s.parent_pid, Some(7));
    assert_eq!(s.config.change_feed_retention, 5);
    // --tls stands for every protocol variable, --key for every key one.
    let s = ok(
        &["--tls", "--key", OTHER_KEY],
        &[
            (COSMOS_EMULATOR_TLS, "no"),
            (COSMOS_EMULATOR_PROTOCOL, "ftp"),
            (COSMOS_EMULATOR_KEY, "?"),
            (COSMOS_EMULATOR_KEY_FILE, "/nonexistent"),
        ],
    );
    assert_eq!(s.config.protocol, Protocol::Https);
    assert_eq!(s.config.key, OTHER_KEY);
}

#[test]
fn the_own_variables_refuse_invalid_values_naming_themselves() {
    for (name, value, accepted) in [
        (COSMOS_EMULATOR_HOST, "a b", "IP address or a DNS name"),
        (COSMOS_EMULATOR_PORT, "65536", "0 to 65535"),
        (COSMOS_EMULATOR_KEY, "not base64!", "base64"),
        (COSMOS_EMULATOR_KEY_FILE, "/nonexistent/key", "cannot read"),
        (COSMOS_EMULATOR_CLOCK, "sundial", "system or manual"),
        (COSMOS_EMULATOR_CLOCK_START, "soon", "epoch seconds"),
        (COSMOS_EMULATOR_TLS, "yes", "true, false, 1 or 0"),
        (
            COSMOS_EMULATOR_PROTOCOL,
            "ftp",
            "http, https, https-insecure or auto",
        ),
        (COSMOS_EMULATOR_CHANGE_FEED_RETENTION, "-1", "0 or more"),
        (COSMOS_EMULATOR_RANGES_PER_CONTAINER, "0", "1 to 1000"),
        (
            COSMOS_EMULATOR_SYNC,
            "sometimes",
            "always, periodic or never",
        ),
        (COSMOS_EMULATOR_LOG_LEVEL, "loud", "quiet, error"),
        (
            COSMOS_EMULATOR_ENABLE_EXPLORER,
            "yes",
            "true, false, 1 or 0",
        ),
        (COSMOS_EMULATOR_ENABLE_TELEMETRY, "2", "true, false, 1 or 0"),
        (
            COSMOS_EMULATOR_ADVERTISE_HOST,
            "http://x",
            "IP address or a DNS name",
        ),
        (COSMOS_EMULATOR_HEALTH_PORT, "http", "0 to 65535"),
        (COSMOS_EMULATOR_PARENT_PID, "0", "process id"),
    ] {
        let message = refused(&[], &[(name, value)], name);
        assert!(message.contains(accepted), "{name}={value}: {message}");
    }
}

#[test]
fn aliases_that_agree_are_one_setting_and_that_disagree_stop_the_start_naming_both() {
    let agreeing = ok(
        &[],
        &[
            (COSMOS_EMULATOR_PORT, "9000"),
            (PORT, "9000"),
            (COSMOS_EMULATOR_PROTOCOL, "https"),
            (PROTOCOL, "https-insecure"),
            (COSMOS_EMULATOR_TLS, "1"),
            (COSMOS_EMULATOR_ENABLE_EXPLORER, "false"),
            (ENABLE_EXPLORER, "0"),
            (COSMOS_EMULATOR_ADVERTISE_HOST, "10.0.0.5"),
            (IP_ADDRESS_OVERRIDE, "10.0.0.5"),
        ],
    );
    assert_eq!(agreeing.config.port, 9000);
    assert_eq!(agreeing.config.protocol, Protocol::Https);
    assert!(!agreeing.config.explorer);
    for pair in [
        [(COSMOS_EMULATOR_PORT, "9000"), (PORT, "9001")],
        [(COSMOS_EMULATOR_PROTOCOL, "auto"), (PROTOCOL, "https")],
        [(COSMOS_EMULATOR_TLS, "true"), (PROTOCOL, "http")],
        [(COSMOS_EMULATOR_TLS, "false"), (PROTOCOL, "auto")],
        [(COSMOS_EMULATOR_DATA_DIR, "/a"), (DATA_PATH, "/b")],
        [(COSMOS_EMULATOR_LOG_LEVEL, "warn"), (LOG_LEVEL, "info")],
        [
            (COSMOS_EMULATOR_RANGES_PER_CONTAINER, "2"),
            (PARTITION_COUNT, "3"),
        ],
        [
            (COSMOS_EMULATOR_ENABLE_TELEMETRY, "true"),
            (ENABLE_TELEMETRY, "false"),
        ],
        [
            (COSMOS_EMULATOR_ADVERTISE_HOST, "cosmos"),
            (IP_ADDRESS_OVERRIDE, "10.0.0.5"),
        ],
        [(COSMOS_EMULATOR_KEY, OTHER_KEY), (KEY, WELL_KNOWN_KEY)],
    ] {
        let message = refused(&[], &pair, pair[0].0);
        assert!(message.contains(pair[1].0), "{pair:?}: {message}");
        assert!(message.contains("disagree"), "{pair:?}: {message}");
    }
    // Keys are never shown.
    let message = refused(
        &[],
        &[(COSMOS_EMULATOR_KEY, OTHER_KEY), (KEY, WELL_KNOWN_KEY)],
        KEY,
    );
    assert!(
        !message.contains(OTHER_KEY) && !message.contains(WELL_KNOWN_KEY),
        "{message}"
    );
}

#[test]
fn testcontainers_python_none_partition_count_counts_as_unset() {
    // What it sends when its user gave neither a count nor persistence.
    let s = ok(
        &[],
        &[
            (PARTITION_COUNT, "None"),
            (ENABLE_DATA_PERSISTENCE, "False"),
        ],
    );
    assert_eq!(s.config.min_ranges_per_container, 1);
    assert_eq!(s.config.data_dir, None);
    // Only there: elsewhere None is what it says, an invalid value.
    refused(
        &[],
        &[(COSMOS_EMULATOR_RANGES_PER_CONTAINER, "None")],
        "RANGES",
    );
    refused(
        &[],
        &[(ENABLE_DATA_PERSISTENCE, "None")],
        ENABLE_DATA_PERSISTENCE,
    );
}

#[test]
fn the_default_data_dir_is_used_only_when_nothing_else_chooses() {
    let default = (COSMOS_EMULATOR_DEFAULT_DATA_DIR, "/data");
    // Alone: used, and said why.
    let s = ok(&[], &[default]);
    assert_eq!(s.config.data_dir, Some(PathBuf::from("/data")));
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("/data") && n.contains(COSMOS_EMULATOR_DEFAULT_DATA_DIR)),
        "{:?}",
        s.notes
    );
    // Persistence true asks for a directory: this one, before the user's.
    let s = ok(
        &[],
        &[default, (ENABLE_DATA_PERSISTENCE, "true"), ("HOME", "/h")],
    );
    assert_eq!(s.config.data_dir, Some(PathBuf::from("/data")));
    // Persistence false turns it off, without a conflict, and says so.
    for off in ["False", "false", "0"] {
        let s = ok(&[], &[default, (ENABLE_DATA_PERSISTENCE, off)]);
        assert_eq!(s.config.data_dir, None, "{off}");
        assert!(
            s.notes.iter().any(|n| n.contains("memory only")),
            "{:?}",
            s.notes
        );
    }
    // A directory named anywhere else wins.
    for (args, vars, chosen) in [
        (&["--data-dir", "/flag"][..], &[default][..], "/flag"),
        (&[], &[default, (DATA_PATH, "/vnext")], "/vnext"),
        (&[], &[default, (COSMOS_EMULATOR_DATA_DIR, "/own")], "/own"),
    ] {
        let s = ok(args, vars);
        assert_eq!(s.config.data_dir, Some(PathBuf::from(chosen)));
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }
    // And --sync is then satisfied by it.
    assert!(resolve_with(&["--sync", "always"], &[default]).is_ok());
}

#[test]
fn requirements_name_the_variable_that_asked() {
    refused(
        &[],
        &[(COSMOS_EMULATOR_CERT_OUT, "/tmp/c.pem")],
        COSMOS_EMULATOR_CERT_OUT,
    );
    ok(
        &[],
        &[(COSMOS_EMULATOR_CERT_OUT, "/tmp/c.pem"), (PROTOCOL, "auto")],
    );
    refused(
        &[],
        &[(COSMOS_EMULATOR_SYNC, "never")],
        COSMOS_EMULATOR_SYNC,
    );
    refused(
        &[],
        &[(COSMOS_EMULATOR_CLOCK_START, "5")],
        COSMOS_EMULATOR_CLOCK_START,
    );
    let s = ok(
        &["--clock-start", "5"],
        &[(COSMOS_EMULATOR_CLOCK, "manual")],
    );
    assert_eq!(s.config.clock, ClockMode::Manual { start: Some(5) });
}

#[test]
fn auto_is_a_protocol_of_the_flag_and_the_variables() {
    assert_eq!(
        ok(&["--protocol", "auto"], &[]).config.protocol,
        Protocol::Auto
    );
    assert_eq!(
        ok(&["--protocol", "AUTO"], &[]).config.protocol,
        Protocol::Auto
    );
    assert_eq!(
        ok(&[], &[(PROTOCOL, "Auto")]).config.protocol,
        Protocol::Auto
    );
}

#[test]
fn the_health_subcommand_leaves_the_flags_as_they_were() {
    let serve = Flags::try_parse_args(["x", "--port", "1", "--tls"]).unwrap();
    assert!(serve.command.is_none());
    assert_eq!(serve.port, Some(1));
    let health =
        Flags::try_parse_args(["x", "health", "--port", "8080", "--path", "/alive"]).unwrap();
    match health.command {
        Some(Command::Health(args)) => {
            assert_eq!(args.port, Some(8080));
            assert_eq!(args.path, "/alive");
            assert_eq!(args.host, None);
        }
        None => panic!("the health subcommand"),
    }
    assert_eq!(
        Flags::try_parse_args(["x", "health"]).unwrap().port,
        None,
        "the subcommand's --port is its own"
    );
    // Serving flags do not go with it, nor it with a bad flag.
    assert!(Flags::try_parse_args(["x", "--tls", "health"]).is_err());
    assert!(Flags::try_parse_args(["x", "health", "--tls"]).is_err());
    assert!(Flags::try_parse_args(["x", "health", "--path", "ready"]).is_err());
}

/// The image's defaults (`COSMOS_EMULATOR_DEFAULT_PROTOCOL=auto` and
/// `COSMOS_EMULATOR_DEFAULT_CERT_OUT`) yield to whatever a user's
/// environment or command line says, instead of contradicting it.
#[test]
fn the_default_protocol_and_certificate_path_yield_to_the_users() {
    let pem = "/tmp/cosmos/appdata/emulator.pem";
    let image = [
        (COSMOS_EMULATOR_DEFAULT_PROTOCOL, "auto"),
        (COSMOS_EMULATOR_DEFAULT_CERT_OUT, pem),
    ];
    // Alone: auto, and the certificate written there.
    let s = ok(&[], &image);
    assert_eq!(s.config.protocol, Protocol::Auto);
    assert_eq!(s.config.cert_out, Some(PathBuf::from(pem)));
    // vNext's PROTOCOL (Testcontainers for Node sets http) wins, and the
    // certificate path is then not refused but unused.
    let s = ok(&[], &[image[0], image[1], (PROTOCOL, "http")]);
    assert_eq!(s.config.protocol, Protocol::Http);
    assert_eq!(s.config.cert_out, None);
    let s = ok(&[], &[image[0], image[1], (PROTOCOL, "https")]);
    assert_eq!(s.config.protocol, Protocol::Https);
    assert_eq!(s.config.cert_out, Some(PathBuf::from(pem)));
    // Flags win too, and a certificate path of the user's beats the default.
    let s = ok(&["--tls", "--cert-out", "/mine.pem"], &image);
    assert_eq!(s.config.protocol, Protocol::Https);
    assert_eq!(s.config.cert_out, Some(PathBuf::from("/mine.pem")));
    // Without the image's variables, nothing changes: http, no file.
    let s = ok(&[], &[]);
    assert_eq!(s.config.protocol, Protocol::Http);
    assert_eq!(s.config.cert_out, None);
    // An invalid default still stops the start, naming it.
    refused(
        &[],
        &[(COSMOS_EMULATOR_DEFAULT_PROTOCOL, "gopher")],
        COSMOS_EMULATOR_DEFAULT_PROTOCOL,
    );
}
