//! Where each setting of the `cosmos-emulator` binary comes from: its flag,
//! else its environment variable(s), else its default.
//!
//! The variables are those container tools set for Microsoft's Linux
//! emulator ("vNext": `PORT`, `PROTOCOL`, `KEY_FILE`, `DATA_PATH`,
//! `LOG_LEVEL`, `ENABLE_EXPLORER`, `ENABLE_TELEMETRY`) and for its older
//! image (`AZURE_COSMOS_EMULATOR_*`), so that either's command line or
//! environment starts this binary the same way. The rules:
//!
//! - a flag always wins, and its variables are then not read at all;
//! - an empty variable counts as unset (`docker run -e VAR=` passes one);
//! - an invalid value stops the start ([`Invalid`], exit code 2) with a
//!   message naming the variable and what it accepts;
//! - two variables for one setting (`KEY_FILE` and
//!   `AZURE_COSMOS_EMULATOR_KEY`; `DATA_PATH` and
//!   `AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE=false`) must agree, else
//!   the start stops naming both: neither silently wins.
//!
//! [`resolve`] takes the environment as a function, so that tests give it a
//! map instead of changing the process's environment.

use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::auth::MasterKey;
use crate::persist::SyncMode;
use crate::{ClockMode, Config, Protocol, WELL_KNOWN_KEY};

pub const PORT: &str = "PORT";
pub const PROTOCOL: &str = "PROTOCOL";
pub const KEY_FILE: &str = "KEY_FILE";
pub const DATA_PATH: &str = "DATA_PATH";
pub const LOG_LEVEL: &str = "LOG_LEVEL";
pub const ENABLE_EXPLORER: &str = "ENABLE_EXPLORER";
pub const ENABLE_TELEMETRY: &str = "ENABLE_TELEMETRY";
pub const KEY: &str = "AZURE_COSMOS_EMULATOR_KEY";
pub const PARTITION_COUNT: &str = "AZURE_COSMOS_EMULATOR_PARTITION_COUNT";
pub const ENABLE_DATA_PERSISTENCE: &str = "AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE";
pub const IP_ADDRESS_OVERRIDE: &str = "AZURE_COSMOS_EMULATOR_IP_ADDRESS_OVERRIDE";
/// The tracing filter, which beats `LOG_LEVEL` (but not `--log-level`).
pub const RUST_LOG: &str = "RUST_LOG";

/// Every variable the binary reads (tests clear them around a child).
pub const VARIABLES: &[&str] = &[
    PORT,
    PROTOCOL,
    KEY_FILE,
    DATA_PATH,
    LOG_LEVEL,
    ENABLE_EXPLORER,
    ENABLE_TELEMETRY,
    KEY,
    PARTITION_COUNT,
    ENABLE_DATA_PERSISTENCE,
    IP_ADDRESS_OVERRIDE,
    RUST_LOG,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockArg {
    /// The machine's wall clock.
    System,
    /// Stands still until moved through POST /_emulator/clock.
    Manual,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncArg {
    /// fdatasync before every write is acknowledged (concurrent writes
    /// share one): nothing acknowledged is lost to a power cut.
    Always,
    /// fdatasync once a second: a power cut can lose the last second.
    Periodic,
    /// Leave it to the operating system.
    Never,
}

/// vNext's `--protocol` / `PROTOCOL`, and `auto`. Both HTTPS values serve
/// HTTPS with the certificate made at start (as `--tls`): there is no
/// certificate to bring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolArg {
    Http,
    Https,
    HttpsInsecure,
    /// HTTP and HTTPS on the same port, told apart by each connection's
    /// first byte.
    Auto,
}

impl ProtocolArg {
    fn protocol(self) -> Protocol {
        match self {
            ProtocolArg::Http => Protocol::Http,
            ProtocolArg::Https | ProtocolArg::HttpsInsecure => Protocol::Https,
            ProtocolArg::Auto => Protocol::Auto,
        }
    }
}

/// vNext's `--log-level` / `LOG_LEVEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Nothing.
    Quiet,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    /// The tracing filter directive.
    fn directive(self) -> &'static str {
        match self {
            LogLevel::Quiet => "off",
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// A local Azure Cosmos DB (NoSQL) endpoint with exact time-to-live semantics.
///
/// Flags beat environment variables; [env: ...] names the variables read
/// when a flag is absent (an empty variable counts as unset; an invalid
/// one stops the start with exit code 2).
#[derive(Debug, Parser)]
#[command(name = "cosmos-emulator", version)]
pub struct Flags {
    /// Address to listen on (also the health server's) [default: 127.0.0.1]
    #[arg(long)]
    pub host: Option<String>,
    /// Port to listen on; 0 picks a free one [env: PORT] [default: 8081]
    #[arg(long)]
    pub port: Option<u16>,
    /// Base64 master key clients sign requests with [env:
    /// AZURE_COSMOS_EMULATOR_KEY] [default: the well-known emulator key]
    #[arg(long, conflicts_with = "key_file")]
    pub key: Option<String>,
    /// A file holding the base64 master key [env: KEY_FILE]
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Where time comes from [default: system]
    #[arg(long, value_enum)]
    pub clock: Option<ClockArg>,
    /// Initial time of the manual clock, in epoch seconds (default: now).
    #[arg(long)]
    pub clock_start: Option<i64>,
    /// Serve HTTPS, with a certificate for localhost and 127.0.0.1 made at
    /// start (the same as --protocol https).
    #[arg(long, conflicts_with = "protocol")]
    pub tls: bool,
    /// http; HTTPS as --tls (https and https-insecure alike); or auto:
    /// both on the one port [env: PROTOCOL] [default: http]
    #[arg(long, value_enum, ignore_case = true)]
    pub protocol: Option<ProtocolArg>,
    /// Write the certificate clients should trust to this file (PEM),
    /// creating its directory; needs HTTPS (or auto).
    #[arg(long, value_name = "PATH")]
    pub cert_out: Option<PathBuf>,
    /// How long the change feed's all-versions-and-deletes mode can read
    /// back, in seconds of the emulator's clock [default: 3600]
    #[arg(long, value_parser = clap::value_parser!(i64).range(0..))]
    pub change_feed_retention: Option<i64>,
    /// Give every new container at least this many partition key ranges
    /// (more if its throughput takes more: one per 10,000 RU/s), 1 to 1000
    /// [env: AZURE_COSMOS_EMULATOR_PARTITION_COUNT] [default: 1]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub ranges_per_container: Option<u16>,
    /// Keep everything in this directory (created if needed) and load it at
    /// start; without it, data lives in memory only. Every acknowledged
    /// write survives the process being killed; --sync chooses power-loss
    /// durability [env: DATA_PATH, or
    /// AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE=true for
    /// $XDG_DATA_HOME/cosmos-emulator]
    #[arg(long, value_name = "DIR", visible_alias = "data-path")]
    pub data_dir: Option<PathBuf>,
    /// When acknowledged writes reach the disk (with a data directory)
    /// [default: periodic]
    #[arg(long, value_enum)]
    pub sync: Option<SyncArg>,
    /// Log verbosity on stderr [env: RUST_LOG (a tracing filter), then
    /// LOG_LEVEL] [default: info]
    #[arg(long, value_enum, ignore_case = true)]
    pub log_level: Option<LogLevel>,
    /// Serve the explorer page at /_explorer/index.html [env:
    /// ENABLE_EXPLORER] [default: true]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = flag_bool)]
    pub enable_explorer: Option<bool>,
    /// Accepted for vNext compatibility; this emulator sends no telemetry,
    /// whatever the value [env: ENABLE_TELEMETRY]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = flag_bool)]
    pub enable_telemetry: Option<bool>,
    /// The host the account document (GET /) tells clients to use, with
    /// the port they used, instead of the one they addressed: an IP address
    /// or a DNS name [env: AZURE_COSMOS_EMULATOR_IP_ADDRESS_OVERRIDE (an IP
    /// address)]
    #[arg(long, value_name = "HOST", value_parser = advertise_host)]
    pub advertise_host: Option<String>,
    /// Serve GET /alive, /ready and /status on this port of --host (plain
    /// HTTP, unauthenticated); 0 picks a free one [default: off]
    #[arg(long, value_name = "PORT")]
    pub health_port: Option<u16>,
    /// Stop (as on SIGTERM) once process PID is no longer this one's
    /// parent: a test runner passes its own pid so the emulator never
    /// outlives it. Unix only (accepted and ignored elsewhere).
    #[arg(long, value_name = "PID")]
    pub parent_pid: Option<u32>,
}

/// Everything the binary needs to start.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config: Config,
    pub health_port: Option<u16>,
    pub parent_pid: Option<u32>,
    /// The tracing filter.
    pub log_filter: String,
    /// What to log once logging is set up (a setting without effect, a
    /// directory chosen for the caller).
    pub notes: Vec<String>,
}

/// Why the start stops: names the flag or variable and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

/// The environment: a variable's value, if set.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// The process's own environment.
pub fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Flags, then the environment, then defaults.
pub fn resolve(flags: Flags, env: Env) -> Result<Settings, Invalid> {
    let mut notes = Vec::new();

    let port = flag_or_var(flags.port, env, PORT, |v| {
        v.parse(
            |t| t.parse().ok(),
            "not a port number; expected 0 to 65535 (0 picks a free port)",
        )
    })?
    .unwrap_or(8081);

    // --tls is a flag for PROTOCOL too.
    let protocol = if flags.tls {
        Protocol::Https
    } else {
        flag_or_var(flags.protocol, env, PROTOCOL, |v| {
            v.parse(
                |t| ProtocolArg::from_str(t, true).ok(),
                "expected http, https, https-insecure or auto",
            )
        })?
        .map_or(Protocol::Http, ProtocolArg::protocol)
    };
    if flags.cert_out.is_some() && !protocol.serves_tls() {
        return Err(Invalid(
            "--cert-out needs HTTPS: add --tls or --protocol https (or auto), or set PROTOCOL=https"
                .into(),
        ));
    }

    let key = match (flags.key, &flags.key_file) {
        (Some(key), _) => checked_key(key, "--key")?,
        (None, Some(path)) => key_from_file(path, "--key-file")?,
        (None, None) => key_from_env(env)?,
    };

    let clock = match (flags.clock.unwrap_or(ClockArg::System), flags.clock_start) {
        (ClockArg::Manual, start) => ClockMode::Manual { start },
        (ClockArg::System, None) => ClockMode::System,
        (ClockArg::System, Some(_)) => {
            return Err(Invalid("--clock-start needs --clock manual".into()))
        }
    };

    let min_ranges = flag_or_var(flags.ranges_per_container, env, PARTITION_COUNT, |v| {
        v.parse(
            |t| t.parse().ok().filter(|n: &u16| (1..=1000).contains(n)),
            "expected a whole number from 1 to 1000",
        )
    })?
    .unwrap_or(1);

    let data_dir = match flags.data_dir {
        Some(dir) => Some(dir),
        None => data_dir_from_env(env, &mut notes)?,
    };
    if flags.sync.is_some() && data_dir.is_none() {
        return Err(Invalid(
            "--sync needs a data directory: add --data-dir (or set DATA_PATH)".into(),
        ));
    }

    // --log-level, else RUST_LOG (a whole tracing filter), else LOG_LEVEL.
    let log_filter = match flags.log_level {
        Some(level) => level.directive().to_string(),
        None => match Var::read(env, RUST_LOG)? {
            Some(rust_log) => rust_log.text,
            None => flag_or_var(None, env, LOG_LEVEL, |v| {
                v.parse(
                    |t| LogLevel::from_str(t, true).ok(),
                    "expected quiet, error, warn, info, debug or trace",
                )
            })?
            .unwrap_or(LogLevel::Info)
            .directive()
            .to_string(),
        },
    };

    let explorer =
        flag_or_var(flags.enable_explorer, env, ENABLE_EXPLORER, Var::boolean)?.unwrap_or(true);
    let telemetry =
        flag_or_var(flags.enable_telemetry, env, ENABLE_TELEMETRY, Var::boolean)?.unwrap_or(false);
    if telemetry {
        notes
            .push("telemetry was asked for: this emulator sends none, whatever the setting".into());
    }

    let advertise_host = flag_or_var(flags.advertise_host, env, IP_ADDRESS_OVERRIDE, |v| {
        v.parse(
            |t| t.parse::<IpAddr>().ok().map(|ip| ip.to_string()),
            "expected an IP address, such as 192.168.1.20",
        )
    })?;

    let config = Config {
        host: flags.host.unwrap_or_else(|| Config::default().host),
        port,
        key,
        clock,
        background_purge: true,
        protocol,
        cert_out: flags.cert_out,
        change_feed_retention: flags
            .change_feed_retention
            .unwrap_or(crate::store::DEFAULT_CHANGE_FEED_RETENTION_SECONDS),
        min_ranges_per_container: min_ranges.into(),
        data_dir,
        sync: match flags.sync.unwrap_or(SyncArg::Periodic) {
            SyncArg::Always => SyncMode::Always,
            SyncArg::Periodic => SyncMode::Periodic,
            SyncArg::Never => SyncMode::Never,
        },
        explorer,
        advertise_host,
        ..Config::default()
    };
    Ok(Settings {
        config,
        health_port: flags.health_port,
        parent_pid: flags.parent_pid,
        log_filter,
        notes,
    })
}

/// The flag's value if given (the variable is then not read), else the
/// variable's, parsed; `None` when neither is set.
fn flag_or_var<T>(
    flag: Option<T>,
    env: Env,
    name: &str,
    parse: impl FnOnce(&Var) -> Result<T, Invalid>,
) -> Result<Option<T>, Invalid> {
    match flag {
        Some(value) => Ok(Some(value)),
        None => Var::read(env, name)?.map(|v| parse(&v)).transpose(),
    }
}

/// One set, non-empty variable, as text.
struct Var {
    name: String,
    text: String,
}

impl Var {
    fn read(env: Env, name: &str) -> Result<Option<Var>, Invalid> {
        let Some(value) = env(name).filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        match value.into_string() {
            Ok(text) => Ok(Some(Var {
                name: name.to_string(),
                text,
            })),
            Err(_) => Err(Invalid(format!("{name} is not valid UTF-8"))),
        }
    }

    /// `parse` of the text, or a refusal naming the variable and `accepted`.
    fn parse<T>(
        &self,
        parse: impl FnOnce(&str) -> Option<T>,
        accepted: &str,
    ) -> Result<T, Invalid> {
        parse(&self.text).ok_or_else(|| self.invalid(accepted))
    }

    fn invalid(&self, accepted: &str) -> Invalid {
        Invalid(format!("{}={:?}: {accepted}", self.name, self.text))
    }

    fn boolean(&self) -> Result<bool, Invalid> {
        parse_bool(&self.text).ok_or_else(|| self.invalid("expected true, false, 1 or 0"))
    }
}

/// `true`, `false`, `1`, `0`, in any case.
fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

fn flag_bool(text: &str) -> Result<bool, String> {
    parse_bool(text).ok_or_else(|| "expected true, false, 1 or 0".into())
}

/// An IP address, or a DNS name (letters, digits, hyphens, dots).
fn advertise_host(text: &str) -> Result<String, String> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    let name_ok = !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if name_ok {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(
            "expected an IP address or a DNS name, such as 192.168.1.20 or host.docker.internal"
                .into(),
        )
    }
}

/// The key, checked now so that a bad one stops the start naming its source.
fn checked_key(key: String, source: &str) -> Result<String, Invalid> {
    let key = key.trim().to_string();
    MasterKey::from_base64(&key)
        .map_err(|e| Invalid(format!("{source}: {e}; expected the base64 master key")))?;
    Ok(key)
}

fn key_from_file(path: &std::path::Path, source: &str) -> Result<String, Invalid> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Invalid(format!(
            "{source} {}: cannot read it ({e}); expected a readable file holding the base64 master key",
            path.display()
        ))
    })?;
    checked_key(text, &format!("{source} {}", path.display()))
}

/// `KEY_FILE` or `AZURE_COSMOS_EMULATOR_KEY`; both must then hold one key.
fn key_from_env(env: Env) -> Result<String, Invalid> {
    let from_file = match env(KEY_FILE).filter(|v| !v.is_empty()) {
        Some(path) => Some(key_from_file(&PathBuf::from(path), KEY_FILE)?),
        None => None,
    };
    let direct = match Var::read(env, KEY)? {
        Some(v) => Some(checked_key(v.text, KEY)?),
        None => None,
    };
    match (from_file, direct) {
        (Some(a), Some(b)) if a != b => Err(Invalid(format!(
            "{KEY_FILE} and {KEY} hold different keys: set only one of them"
        ))),
        (Some(key), _) | (None, Some(key)) => Ok(key),
        (None, None) => Ok(WELL_KNOWN_KEY.into()),
    }
}

/// `DATA_PATH`, else the default directory when
/// `AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE` is true, else none.
fn data_dir_from_env(env: Env, notes: &mut Vec<String>) -> Result<Option<PathBuf>, Invalid> {
    let persist = Var::read(env, ENABLE_DATA_PERSISTENCE)?
        .map(|v| v.boolean())
        .transpose()?;
    let path = env(DATA_PATH).filter(|v| !v.is_empty()).map(PathBuf::from);
    match (path, persist) {
        (Some(_), Some(false)) => Err(Invalid(format!(
            "{DATA_PATH} asks to keep the data and {ENABLE_DATA_PERSISTENCE}=false not to: \
             unset one of them"
        ))),
        (Some(path), _) => Ok(Some(path)),
        (None, Some(true)) => {
            let dir = default_data_dir(env).ok_or_else(|| {
                Invalid(format!(
                    "{ENABLE_DATA_PERSISTENCE}=true needs a directory: set {DATA_PATH} (none of \
                     XDG_DATA_HOME, HOME and LOCALAPPDATA is set to find the default)"
                ))
            })?;
            notes.push(format!(
                "{ENABLE_DATA_PERSISTENCE}=true: keeping the data in {} (set {DATA_PATH} to choose)",
                dir.display()
            ));
            Ok(Some(dir))
        }
        (None, _) => Ok(None),
    }
}

/// `cosmos-emulator` in the user's data directory: `$XDG_DATA_HOME`, else
/// `$HOME/.local/share` (also on macOS), else `%LOCALAPPDATA%` (Windows).
pub fn default_data_dir(env: Env) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = set("XDG_DATA_HOME")
        .or_else(|| set("HOME").map(|home| home.join(".local").join("share")))
        .or_else(|| set("LOCALAPPDATA"))?;
    Some(base.join("cosmos-emulator"))
}

#[cfg(test)]
mod tests;
