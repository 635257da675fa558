//! The resolution flag → environment → default, with the environment as a
//! map (the process's own is never touched).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;

use super::*;

fn resolve_with(args: &[&str], vars: &[(&str, &str)]) -> Result<Settings, Invalid> {
    let flags =
        Flags::try_parse_from(std::iter::once("cosmos-emulator").chain(args.iter().copied()))
            .expect("flags parse");
    let vars: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    resolve(flags, &|name| vars.get(name).cloned())
}

fn ok(args: &[&str], vars: &[(&str, &str)]) -> Settings {
    resolve_with(args, vars).unwrap_or_else(|e| panic!("{args:?} {vars:?}: {e}"))
}

/// The message of a refusal, which must name `name`.
#[track_caller]
fn refused(args: &[&str], vars: &[(&str, &str)], name: &str) -> String {
    let message = resolve_with(args, vars).map(|_| ()).expect_err("refused").0;
    assert!(message.contains(name), "{message:?} names {name}");
    message
}

const OTHER_KEY: &str = "c2VjcmV0LWtleS1mb3ItdGhlLXRlc3Rz";

#[test]
fn defaults_without_flags_or_variables() {
    let s = ok(&[], &[]);
    assert_eq!(s.config.port, 8081);
    assert_eq!(s.config.host, "localhost");
    assert_eq!(s.config.key, WELL_KNOWN_KEY);
    assert_eq!(s.config.protocol, Protocol::Http);
    assert_eq!(s.config.data_dir, None);
    assert_eq!(s.config.min_ranges_per_container, 1);
    assert!(s.config.explorer);
    assert_eq!(s.config.advertise_host, None);
    assert_eq!(s.log_filter, "info");
    assert_eq!(s.health_port, None);
    assert_eq!(s.parent_pid, None);
    assert!(s.notes.is_empty());
}

#[test]
fn each_variable_takes_effect() {
    let s = ok(
        &[],
        &[
            (PORT, "9000"),
            (PROTOCOL, "https"),
            (KEY, OTHER_KEY),
            (DATA_PATH, "/tmp/d"),
            (LOG_LEVEL, "debug"),
            (ENABLE_EXPLORER, "false"),
            (ENABLE_TELEMETRY, "0"),
            (PARTITION_COUNT, "25"),
            (IP_ADDRESS_OVERRIDE, "10.0.0.5"),
        ],
    );
    assert_eq!(s.config.port, 9000);
    assert_eq!(s.config.protocol, Protocol::Https);
    assert_eq!(s.config.key, OTHER_KEY);
    assert_eq!(s.config.data_dir, Some(PathBuf::from("/tmp/d")));
    assert_eq!(s.log_filter, "debug");
    assert!(!s.config.explorer);
    assert_eq!(s.config.min_ranges_per_container, 25);
    assert_eq!(s.config.advertise_host.as_deref(), Some("10.0.0.5"));
}

#[test]
fn a_flag_beats_its_variable_which_is_then_not_read() {
    let s = ok(
        &[
            "--port",
            "0",
            "--protocol",
            "http",
            "--key",
            OTHER_KEY,
            "--data-dir",
            "/flag",
            "--log-level",
            "warn",
            "--enable-explorer",
            "true",
            "--ranges-per-container",
            "2",
            "--advertise-host",
            "example.test",
        ],
        &[
            (PORT, "not a port"),
            (PROTOCOL, "ftp"),
            (KEY_FILE, "/nonexistent/key"),
            (KEY, "not base64!"),
            (DATA_PATH, "/env"),
            (ENABLE_DATA_PERSISTENCE, "maybe"),
            (LOG_LEVEL, "loud"),
            (RUST_LOG, "trace"),
            (ENABLE_EXPLORER, "no"),
            (PARTITION_COUNT, "0"),
            (IP_ADDRESS_OVERRIDE, "nope"),
        ],
    );
    assert_eq!(s.config.port, 0);
    assert_eq!(s.config.protocol, Protocol::Http);
    assert_eq!(s.config.key, OTHER_KEY);
    assert_eq!(s.config.data_dir, Some(PathBuf::from("/flag")));
    assert_eq!(s.log_filter, "warn");
    assert!(s.config.explorer);
    assert_eq!(s.config.min_ranges_per_container, 2);
    assert_eq!(s.config.advertise_host.as_deref(), Some("example.test"));
    // --tls is PROTOCOL's flag too.
    assert_eq!(
        ok(&["--tls"], &[(PROTOCOL, "http")]).config.protocol,
        Protocol::Https
    );
}

#[test]
fn protocol_values_in_any_case() {
    for (value, tls) in [
        ("http", false),
        ("HTTP", false),
        ("https", true),
        ("Https", true),
        ("https-insecure", true),
        ("HTTPS-INSECURE", true),
    ] {
        assert_eq!(
            ok(&[], &[(PROTOCOL, value)]).config.protocol.serves_tls(),
            tls,
            "{value}"
        );
    }
    assert!(ok(&["--protocol", "https-insecure"], &[])
        .config
        .protocol
        .serves_tls());
}

#[test]
fn cert_out_needs_https_from_any_source() {
    refused(&["--cert-out", "/tmp/c.pem"], &[], "--cert-out");
    assert!(ok(&["--cert-out", "/tmp/c.pem"], &[(PROTOCOL, "https")])
        .config
        .protocol
        .serves_tls());
    assert!(ok(&["--cert-out", "/tmp/c.pem", "--tls"], &[])
        .config
        .protocol
        .serves_tls());
}

#[test]
fn log_level_maps_to_a_filter_and_rust_log_beats_it() {
    for (value, filter) in [
        ("quiet", "off"),
        ("error", "error"),
        ("WARN", "warn"),
        ("Info", "info"),
        ("debug", "debug"),
        ("trace", "trace"),
    ] {
        assert_eq!(ok(&[], &[(LOG_LEVEL, value)]).log_filter, filter, "{value}");
    }
    let s = ok(
        &[],
        &[(LOG_LEVEL, "quiet"), (RUST_LOG, "cosmos_emulator=debug")],
    );
    assert_eq!(s.log_filter, "cosmos_emulator=debug");
    assert_eq!(
        ok(&["--log-level", "QUIET"], &[(RUST_LOG, "debug")]).log_filter,
        "off"
    );
}

#[test]
fn booleans_are_true_false_1_or_0_in_any_case() {
    for (value, explorer) in [
        ("true", true),
        ("TRUE", true),
        ("1", true),
        ("False", false),
        ("0", false),
    ] {
        assert_eq!(
            ok(&[], &[(ENABLE_EXPLORER, value)]).config.explorer,
            explorer,
            "{value}"
        );
    }
    for value in ["yes", "on", "2", " true"] {
        let message = refused(&[], &[(ENABLE_EXPLORER, value)], ENABLE_EXPLORER);
        assert!(message.contains("true, false, 1 or 0"), "{message}");
    }
    // The flags, as the Go Testcontainers module passes them.
    assert!(!ok(&["--enable-explorer", "false"], &[]).config.explorer);
    assert!(
        ok(&["--enable-explorer"], &[(ENABLE_EXPLORER, "false")])
            .config
            .explorer
    );
    assert!(Flags::try_parse_from(["x", "--enable-explorer", "maybe"]).is_err());
}

#[test]
fn telemetry_is_accepted_and_never_on() {
    let s = ok(&[], &[(ENABLE_TELEMETRY, "true")]);
    assert!(
        s.notes.iter().any(|n| n.contains("telemetry")),
        "{:?}",
        s.notes
    );
    assert!(ok(&[], &[(ENABLE_TELEMETRY, "false")]).notes.is_empty());
    refused(&[], &[(ENABLE_TELEMETRY, "sometimes")], ENABLE_TELEMETRY);
    assert!(ok(&["--enable-telemetry", "false"], &[]).notes.is_empty());
}

#[test]
fn an_empty_variable_counts_as_unset() {
    let s = ok(
        &[],
        &[
            (PORT, ""),
            (PROTOCOL, ""),
            (KEY_FILE, ""),
            (ENABLE_EXPLORER, ""),
        ],
    );
    assert_eq!(s.config.port, 8081);
    assert_eq!(s.config.protocol, Protocol::Http);
    assert_eq!(s.config.key, WELL_KNOWN_KEY);
    assert!(s.config.explorer);
}

#[test]
fn invalid_values_are_refused_naming_the_variable() {
    for (name, value, accepted) in [
        (PORT, "http", "0 to 65535"),
        (PORT, "70000", "0 to 65535"),
        (PORT, "-1", "0 to 65535"),
        (PROTOCOL, "ftp", "http, https, https-insecure or auto"),
        (KEY, "not base64!", "base64"),
        (PARTITION_COUNT, "0", "1 to 1000"),
        (PARTITION_COUNT, "1001", "1 to 1000"),
        (PARTITION_COUNT, "many", "1 to 1000"),
        (ENABLE_DATA_PERSISTENCE, "yes", "true, false, 1 or 0"),
        (
            LOG_LEVEL,
            "loud",
            "quiet, error, warn, info, debug or trace",
        ),
        (IP_ADDRESS_OVERRIDE, "localhost", "IP address"),
    ] {
        let message = refused(&[], &[(name, value)], name);
        assert!(message.contains(accepted), "{name}={value}: {message}");
    }
}

#[test]
fn a_key_file_is_read_trimmed_and_checked() {
    let dir = std::env::temp_dir().join(format!("settings-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good");
    std::fs::write(&good, format!("{OTHER_KEY}\n")).unwrap();
    let bad = dir.join("bad");
    std::fs::write(&bad, "not base64!").unwrap();
    let good_path = good.to_str().unwrap();
    assert_eq!(ok(&[], &[(KEY_FILE, good_path)]).config.key, OTHER_KEY);
    assert_eq!(ok(&["--key-file", good_path], &[]).config.key, OTHER_KEY);
    refused(&[], &[(KEY_FILE, bad.to_str().unwrap())], KEY_FILE);
    let missing = refused(&[], &[(KEY_FILE, "/nonexistent/key")], KEY_FILE);
    assert!(missing.contains("cannot read"), "{missing}");
    refused(&["--key-file", "/nonexistent/key"], &[], "--key-file");
    // The two key variables must agree.
    assert_eq!(
        ok(&[], &[(KEY_FILE, good_path), (KEY, OTHER_KEY)])
            .config
            .key,
        OTHER_KEY
    );
    let both = refused(
        &[],
        &[(KEY_FILE, good_path), (KEY, WELL_KNOWN_KEY)],
        KEY_FILE,
    );
    assert!(both.contains(KEY), "{both}");
    // --key and --key-file are one setting.
    assert!(Flags::try_parse_from(["x", "--key", OTHER_KEY, "--key-file", good_path]).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn data_persistence_picks_the_user_data_directory() {
    let s = ok(
        &[],
        &[
            (ENABLE_DATA_PERSISTENCE, "true"),
            ("XDG_DATA_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ],
    );
    assert_eq!(
        s.config.data_dir,
        Some(PathBuf::from("/xdg/cosmos-emulator"))
    );
    assert!(
        s.notes.iter().any(|n| n.contains("/xdg/cosmos-emulator")),
        "{:?}",
        s.notes
    );
    let s = ok(&[], &[(ENABLE_DATA_PERSISTENCE, "1"), ("HOME", "/home/u")]);
    assert_eq!(
        s.config.data_dir,
        Some(PathBuf::from("/home/u/.local/share/cosmos-emulator"))
    );
    refused(&[], &[(ENABLE_DATA_PERSISTENCE, "true")], DATA_PATH);
    assert_eq!(
        ok(&[], &[(ENABLE_DATA_PERSISTENCE, "false"), ("HOME", "/h")])
            .config
            .data_dir,
        None
    );
    // DATA_PATH says where; persistence=true agrees, =false contradicts it.
    let s = ok(
        &[],
        &[
            (DATA_PATH, "/d"),
            (ENABLE_DATA_PERSISTENCE, "true"),
            ("HOME", "/h"),
        ],
    );
    assert_eq!(s.config.data_dir, Some(PathBuf::from("/d")));
    let message = refused(
        &[],
        &[(DATA_PATH, "/d"), (ENABLE_DATA_PERSISTENCE, "false")],
        DATA_PATH,
    );
    assert!(message.contains(ENABLE_DATA_PERSISTENCE), "{message}");
}

#[test]
fn sync_needs_a_data_directory_from_any_source() {
    refused(&["--sync", "always"], &[], "--sync");
    let s = ok(&["--sync", "always"], &[(DATA_PATH, "/d")]);
    assert_eq!(s.config.sync, SyncMode::Always);
}

#[test]
fn the_advertised_host_is_an_ip_from_the_variable_or_a_name_from_the_flag() {
    assert_eq!(
        ok(&[], &[(IP_ADDRESS_OVERRIDE, "::1")])
            .config
            .advertise_host
            .as_deref(),
        Some("::1")
    );
    assert_eq!(
        ok(&["--advertise-host", "Host.Docker.Internal"], &[])
            .config
            .advertise_host
            .as_deref(),
        Some("host.docker.internal")
    );
    for bad in ["", "a b", "-x", "x/y", "http://x"] {
        assert!(
            Flags::try_parse_from(["x", "--advertise-host", bad]).is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn data_path_is_an_alias_of_data_dir() {
    let s = ok(&["--data-path", "/p"], &[]);
    assert_eq!(s.config.data_dir, Some(PathBuf::from("/p")));
}

#[test]
fn clock_start_needs_the_manual_clock() {
    refused(&["--clock-start", "5"], &[], "--clock-start");
    let s = ok(&["--clock", "manual", "--clock-start", "5"], &[]);
    assert_eq!(s.config.clock, ClockMode::Manual { start: Some(5) });
}

#[cfg(unix)]
#[test]
fn a_variable_that_is_not_utf8_is_refused_by_name() {
    use std::os::unix::ffi::OsStringExt;
    let flags = Flags::try_parse_from(["x"]).unwrap();
    let env = |name: &str| (name == PORT).then(|| OsString::from_vec(vec![0xff, 0x31]));
    let message = resolve(flags, &env).map(|_| ()).unwrap_err().0;
    assert!(message.contains(PORT), "{message}");
}

#[test]
fn the_help_states_the_defaults_the_code_applies() {
    let help = command().render_long_help().to_string();
    let defaults = Config::default();
    for stated in [
        format!("[default: {DEFAULT_HOST}]"),
        format!("[default: {}]", defaults.port),
        format!("[default: {}]", defaults.change_feed_retention),
    ] {
        assert!(help.contains(&stated), "{stated} in\n{help}");
    }
}

mod every_flag;

/// `12345` as `12,345`, as the help and the guide write throughput.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `--ranges-per-container`'s help and the guide's ranges page say how
/// many ranges throughput takes: the numbers the store lays containers out
/// by (`data/store/ranges.rs`), and the counts those numbers give.
#[test]
fn the_ranges_help_and_guide_say_what_the_store_does() {
    use crate::data::store::{RangeMap, RU_PER_NEW_PHYSICAL_PARTITION, RU_PER_PHYSICAL_PARTITION};
    let (one, per) = (
        thousands(RU_PER_PHYSICAL_PARTITION),
        thousands(RU_PER_NEW_PHYSICAL_PARTITION),
    );
    let help = command()
        .get_arguments()
        .find(|a| a.get_long() == Some("ranges-per-container"))
        .and_then(|a| a.get_help())
        .unwrap()
        .to_string();
    let guide = include_str!("../../../../docs/src/ranges.md");
    let guide = guide.split_whitespace().collect::<Vec<_>>().join(" ");
    for (text, said) in [
        (
            &help,
            format!("one up to {one} RU/s, then one per {per} RU/s"),
        ),
        (&help, format!("an autoscale maximum, one per {one}")),
        (
            &guide,
            format!("one up to {one} RU/s of its own throughput, then one per {per} RU/s"),
        ),
        (&guide, format!("an autoscale maximum counts one per {one}")),
    ] {
        assert!(text.contains(&said), "{said:?} in {text}");
    }
    // What those words mean, as the store counts (the guide's examples).
    for (throughput, autoscale, ranges) in [
        (400, false, 1),
        (RU_PER_PHYSICAL_PARTITION, false, 1),
        (RU_PER_PHYSICAL_PARTITION + 1, false, 2),
        (12_000, false, 2),
        (18_000, false, 3),
        (30_000, false, 5),
        (RU_PER_PHYSICAL_PARTITION, true, 1),
        (20_000, true, 2),
    ] {
        assert_eq!(
            RangeMap::count_for_throughput(throughput, autoscale),
            ranges,
            "{throughput} RU/s, autoscale {autoscale}"
        );
    }
}

mod certificate;
