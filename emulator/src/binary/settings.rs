//! Where each setting of the `cosmos-emulator` binary comes from: its flag,
//! else its environment variable(s), else its default.
//!
//! Every flag has a variable of its own, `COSMOS_EMULATOR_` and the flag in
//! upper snake case (`--clock-start`: `COSMOS_EMULATOR_CLOCK_START`), so
//! that a container is configured by its environment alone. Some flags also
//! read the variables container tools set for Microsoft's Linux emulator
//! ("vNext": `PORT`, `PROTOCOL`, `KEY_FILE`, `DATA_PATH`, `LOG_LEVEL`,
//! `ENABLE_EXPLORER`, `ENABLE_TELEMETRY`, `CERT_PATH`, `CERT_SECRET`) and
//! for its older image (`AZURE_COSMOS_EMULATOR_*`), so that either's command line or
//! environment starts this binary the same way (`vars.rs` lists them all).
//! The rules:
//!
//! - a flag always wins, and its variables are then not read at all;
//! - an empty variable counts as unset (`docker run -e VAR=` passes one);
//! - an invalid value stops the start ([`Invalid`], exit code 2) with a
//!   message naming the variable and what it accepts;
//! - two variables for one setting (`COSMOS_EMULATOR_PORT` and `PORT`;
//!   `KEY_FILE` and `AZURE_COSMOS_EMULATOR_KEY`; `DATA_PATH` and
//!   `AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE=false`) must agree, else
//!   the start stops naming both: neither silently wins.
//!
//! [`resolve`] takes the environment as a function, so that tests give it a
//! map instead of changing the process's environment.

mod account;
mod certificate;
mod choices;
mod data_dir;
mod health_args;
pub(crate) mod values;
mod vars;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::data::clock::ClockMode;
use crate::data::persist::SyncMode;
use crate::net::transport::Protocol;
use crate::protocol::auth::WELL_KNOWN_KEY;
use crate::protocol::consistency::Consistency;
use crate::Config;

pub use certificate::CertificateArgs;
pub use choices::{ClockArg, LogLevel, ProtocolArg, RuChargesArg, SyncArg};
pub use data_dir::default_data_dir;
pub use health_args::HealthArgs;
pub use values::Invalid;
pub use vars::*;

use values::{checked_key, key_from_file};

/// A local Azure Cosmos DB (NoSQL) endpoint with exact time-to-live semantics.
///
/// Flags beat environment variables; [env: ...] names the variables read
/// when a flag is absent (an empty variable counts as unset; an invalid
/// one stops the start with exit code 2).
#[derive(Debug, Parser)]
#[command(
    name = "cosmos-emulator",
    version,
    args_conflicts_with_subcommands = true
)]
pub struct Flags {
    /// Address to listen on (also the health server's); localhost is both
    /// 127.0.0.1 and ::1 on one port, and the endpoint printed names it
    /// [default: localhost]
    #[arg(long, value_parser = values::flag_host)]
    pub host: Option<String>,
    /// Port to listen on; 0 picks a free one [default: 8081]
    #[arg(long)]
    pub port: Option<u16>,
    /// Base64 master key clients sign requests with [default: the
    /// well-known emulator key]
    #[arg(long, conflicts_with = "key_file")]
    pub key: Option<String>,
    /// A file holding the base64 master key
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// Where time comes from [default: system]
    #[arg(long, value_enum, ignore_case = true)]
    pub clock: Option<ClockArg>,
    /// Initial time of the manual clock, in epoch seconds (default: now).
    #[arg(long)]
    pub clock_start: Option<i64>,
    /// Serve HTTPS, with a certificate for localhost and 127.0.0.1 made at
    /// start (the same as --protocol https); the variable: true or false.
    #[arg(long, conflicts_with = "protocol")]
    pub tls: bool,
    /// http; HTTPS as --tls (https and https-insecure alike); or auto:
    /// both on the one port [default: COSMOS_EMULATOR_DEFAULT_PROTOCOL,
    /// which the container image sets to auto, else http]
    #[arg(long, value_enum, ignore_case = true)]
    pub protocol: Option<ProtocolArg>,
    /// Write the certificate clients should trust to this file (PEM),
    /// creating its directory; needs HTTPS (or auto) [default, with HTTPS:
    /// COSMOS_EMULATOR_DEFAULT_CERT_OUT, which the container image sets]
    #[arg(long, value_name = "PATH")]
    pub cert_out: Option<PathBuf>,
    #[command(flatten)]
    pub certificate: CertificateArgs,
    /// Serve the SQL compute gateway on this port of --host too (Microsoft's
    /// emulator serves it on 8903 with /EnableSqlComputeEndpoint): the same
    /// account, with every id addressable as it was signed; 0 picks a free
    /// one [default: off]
    #[arg(long, value_name = "PORT")]
    pub compute_gateway_port: Option<u16>,
    /// The account's default consistency level, which the account document
    /// advertises; a request asking for a stronger one is refused with 400,
    /// as by the service [default: session]
    #[arg(long, value_enum, ignore_case = true)]
    pub consistency: Option<Consistency>,
    /// The account's regions, comma-separated in failover order (the first
    /// takes writes), each served on its own port: the first on --port, the
    /// next on the ports after it (free ports with --port 0), e.g.
    /// "West US,East US" [default: one region, South Central US]
    #[arg(long, value_name = "NAMES")]
    pub regions: Option<String>,
    /// Every region takes writes (enableMultipleWriteLocations) [default:
    /// false: only the first]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::flag_bool)]
    pub multi_write: Option<bool>,
    /// A serverless account: databases and containers take no throughput
    /// (400, as the service refuses it), offers cannot be read, and with
    /// --rate-limit each partition gets 5,000 RU/s [default: false]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::flag_bool)]
    pub serverless: Option<bool>,
    /// How requests are charged: documented (a model through the service's
    /// documented request-unit points) or fixed (1 RU a read, 5.71 a
    /// write, 2.89 a query, as before the model) [default: documented]
    #[arg(long, value_enum, ignore_case = true)]
    pub ru_charges: Option<RuChargesArg>,
    /// Throttle as the service does: each physical partition gets its
    /// container's RU/s (or its database's share) each second, and a
    /// request over it answers 429/3200 with x-ms-retry-after-ms, on the
    /// emulator's clock [default: false]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::flag_bool)]
    pub rate_limit: Option<bool>,
    /// With --rate-limit: partitions under 3,000 RU/s save up to 300 s of
    /// unused RU/s and spend them at up to 3,000 RU/s [default: false]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::flag_bool)]
    pub burst_capacity: Option<bool>,
    /// How long the change feed's all-versions-and-deletes mode can read
    /// back, in seconds of the emulator's clock [default: 3600]
    #[arg(long, value_parser = clap::value_parser!(i64).range(0..))]
    pub change_feed_retention: Option<i64>,
    /// Give every new container at least this many partition key ranges
    /// (more if its throughput takes more: one up to 10,000 RU/s, then one
    /// per 6,000 RU/s; an autoscale maximum, one per 10,000), 1 to 1000
    /// [default: 1]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub ranges_per_container: Option<u16>,
    /// Keep everything in this directory (created if needed) and load it at
    /// start. Every acknowledged write survives the process being killed;
    /// --sync chooses power-loss durability. Without it, data lives in
    /// memory only, unless AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE=true
    /// ($XDG_DATA_HOME/cosmos-emulator) or COSMOS_EMULATOR_DEFAULT_DATA_DIR
    /// names one (ignored with ...ENABLE_DATA_PERSISTENCE=false)
    #[arg(long, value_name = "DIR", visible_alias = "data-path")]
    pub data_dir: Option<PathBuf>,
    /// When acknowledged writes reach the disk (with a data directory)
    /// [default: periodic]
    #[arg(long, value_enum, ignore_case = true)]
    pub sync: Option<SyncArg>,
    /// Log verbosity on stderr; RUST_LOG (a tracing filter) beats its
    /// variables [default: info]
    #[arg(long, value_enum, ignore_case = true)]
    pub log_level: Option<LogLevel>,
    /// Serve the explorer page at /_explorer/index.html [default: true]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::flag_bool)]
    pub enable_explorer: Option<bool>,
    /// Accepted for vNext compatibility; this emulator sends no telemetry,
    /// whatever the value
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::flag_bool)]
    pub enable_telemetry: Option<bool>,
    /// The host the account document (GET /) tells clients to use, with
    /// the port they used, instead of the one they addressed: an IP address
    /// or a DNS name (AZURE_COSMOS_EMULATOR_IP_ADDRESS_OVERRIDE: an IP
    /// address)
    #[arg(long, value_name = "HOST", value_parser = values::flag_advertise_host)]
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
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What the binary does instead of serving.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ask the health server whether the emulator is ready (GET /ready):
    /// exit 0 on a 200, 1 otherwise; for a container's HEALTHCHECK.
    Health(HealthArgs),
}

impl Flags {
    /// The command line, with each flag's variables named in `--help`.
    pub fn try_parse_args<I, T>(args: I) -> Result<Flags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let mut command = command();
        let matches = command.try_get_matches_from_mut(args)?;
        Flags::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
    }
}

/// The clap command: [`Flags`], each flag's help ending with its variables.
pub fn command() -> clap::Command {
    FLAG_VARIABLES
        .iter()
        .fold(Flags::command(), |command, (flag, names)| {
            command.mut_arg(flag.replace('-', "_"), |arg| {
                let env = format!("[env: {}]", names.join(", "));
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                let arg = arg.help(format!("{help} {env}"));
                match arg.get_long_help().map(|h| h.to_string()) {
                    Some(long) => arg.long_help(format!("{long} {env}")),
                    None => arg,
                }
            })
        })
}

/// The binary's host: both loopbacks, printed by name (the library's
/// [`Config::default`] keeps `127.0.0.1` for embedders).
pub const DEFAULT_HOST: &str = "localhost";

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

/// The environment: a variable's value, if set.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// The process's own environment.
pub fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// A number of the type `T` within `range`, from a variable.
fn number<T: std::str::FromStr + PartialOrd>(
    range: impl std::ops::RangeBounds<T>,
    accepted: &'static str,
) -> impl Fn(&Var) -> Result<T, Invalid> {
    move |v| v.parse(|t| t.parse().ok().filter(|n| range.contains(n)), accepted)
}

/// A value of a clap enum, in any case.
fn choice<T: ValueEnum>(accepted: &'static str) -> impl Fn(&Var) -> Result<T, Invalid> {
    move |v| v.parse(|t| T::from_str(t, true).ok(), accepted)
}

/// The value alone, its source no longer needed.
fn value<T>(found: Option<Sourced<T>>) -> Option<T> {
    found.map(|f| f.value)
}

fn path(v: &Var) -> Result<PathBuf, Invalid> {
    Ok(PathBuf::from(&v.text))
}

/// The protocol when no flag or variable chooses one: a container image's
/// `COSMOS_EMULATOR_DEFAULT_PROTOCOL` (auto: HTTP and HTTPS on one port),
/// which yields to a user's `PROTOCOL` instead of contradicting it; else http.
fn default_protocol(env: Env) -> Result<Protocol, Invalid> {
    Ok(match Var::read(env, COSMOS_EMULATOR_DEFAULT_PROTOCOL)? {
        Some(v) => {
            choice::<ProtocolArg>("expected http, https, https-insecure or auto")(&v)?.protocol()
        }
        None => Protocol::Http,
    })
}

/// Flags, then the environment, then defaults.
pub fn resolve(flags: Flags, env: Env) -> Result<Settings, Invalid> {
    let mut notes = Vec::new();
    let account = account::resolve(&flags, env)?;

    let host = flag_or_vars(flags.host, "host", env, &[COSMOS_EMULATOR_HOST], |v| {
        v.parse(values::host_name, values::HOST_ACCEPTED)
    })?;
    let port = flag_or_vars(
        flags.port,
        "port",
        env,
        &[COSMOS_EMULATOR_PORT, PORT],
        number(.., values::PORT_ACCEPTED),
    )?;

    // --tls is --protocol https; its variable, true or false, a protocol too.
    let protocol = if flags.tls {
        Protocol::Https
    } else {
        flag_or_vars(
            flags.protocol.map(ProtocolArg::protocol),
            "protocol",
            env,
            &[COSMOS_EMULATOR_PROTOCOL, PROTOCOL, COSMOS_EMULATOR_TLS],
            |v| match v.name {
                COSMOS_EMULATOR_TLS => Ok(if v.boolean()? {
                    Protocol::Https
                } else {
                    Protocol::Http
                }),
                _ => choice::<ProtocolArg>("expected http, https, https-insecure or auto")(v)
                    .map(ProtocolArg::protocol),
            },
        )?
        .map(|p| p.value)
        .map_or_else(|| default_protocol(env), Ok)?
    };
    let cert_out = flag_or_vars(
        flags.cert_out,
        "cert-out",
        env,
        &[COSMOS_EMULATOR_CERT_OUT],
        path,
    )?;
    if let Some(cert_out) = &cert_out {
        if !protocol.serves_tls() {
            return Err(Invalid(format!(
                "{} needs HTTPS: add --tls or --protocol https (or auto), or set PROTOCOL=https",
                cert_out.source
            )));
        }
    }
    // A container image's default place for the certificate, used only
    // when HTTPS is served and nothing else names a file.
    let cert_out = match value(cert_out) {
        Some(path) => Some(path),
        None if protocol.serves_tls() => {
            Var::read(env, COSMOS_EMULATOR_DEFAULT_CERT_OUT)?.map(|v| PathBuf::from(v.text))
        }
        None => None,
    };

    let certificate = certificate::resolve(flags.certificate, env, protocol)?;

    let key = match (flags.key, &flags.key_file) {
        (Some(key), _) => checked_key(&key, "--key")?,
        (None, Some(path)) => key_from_file(path, "--key-file")?,
        (None, None) => key_from_env(env)?,
    };

    let clock = flag_or_vars(
        flags.clock,
        "clock",
        env,
        &[COSMOS_EMULATOR_CLOCK],
        choice("expected system or manual"),
    )?;
    let clock_start = flag_or_vars(
        flags.clock_start,
        "clock-start",
        env,
        &[COSMOS_EMULATOR_CLOCK_START],
        number(
            ..,
            "expected epoch seconds, a whole number such as 1700000000",
        ),
    )?;
    let clock = match (value(clock).unwrap_or(ClockArg::System), clock_start) {
        (ClockArg::Manual, start) => ClockMode::Manual {
            start: value(start),
        },
        (ClockArg::System, None) => ClockMode::System,
        (ClockArg::System, Some(start)) => {
            return Err(Invalid(format!(
                "{} needs --clock manual (or {COSMOS_EMULATOR_CLOCK}=manual)",
                start.source
            )))
        }
    };

    let retention = flag_or_vars(
        flags.change_feed_retention,
        "change-feed-retention",
        env,
        &[COSMOS_EMULATOR_CHANGE_FEED_RETENTION],
        number(0.., "expected a whole number of seconds, 0 or more"),
    )?;
    let compute_gateway_port = flag_or_vars(
        flags.compute_gateway_port,
        "compute-gateway-port",
        env,
        &[COSMOS_EMULATOR_COMPUTE_GATEWAY_PORT],
        number(0..=65535, "expected a port number, 0 to 65535"),
    )?;
    let consistency = flag_or_vars(
        flags.consistency,
        "consistency",
        env,
        &[COSMOS_EMULATOR_CONSISTENCY],
        choice("expected strong, bounded-staleness, session, consistent-prefix or eventual"),
    )?;
    let min_ranges = flag_or_vars(
        flags.ranges_per_container,
        "ranges-per-container",
        env,
        &[COSMOS_EMULATOR_RANGES_PER_CONTAINER, PARTITION_COUNT],
        number(1..=1000, "expected a whole number from 1 to 1000"),
    )?;

    let data_dir = data_dir::choose(flags.data_dir, env, &mut notes)?;
    let sync = flag_or_vars(
        flags.sync,
        "sync",
        env,
        &[COSMOS_EMULATOR_SYNC],
        choice("expected always, periodic or never"),
    )?;
    if let (Some(sync), None) = (&sync, &data_dir) {
        return Err(Invalid(format!(
            "{} needs a data directory: add --data-dir (or set {COSMOS_EMULATOR_DATA_DIR})",
            sync.source
        )));
    }

    // --log-level, else RUST_LOG (a whole tracing filter), else the levels.
    let log_filter = match flags.log_level {
        Some(level) => level.directive().to_string(),
        None => match Var::read(env, RUST_LOG)? {
            Some(rust_log) => rust_log.text,
            None => value(flag_or_vars(
                None,
                "log-level",
                env,
                &[COSMOS_EMULATOR_LOG_LEVEL, LOG_LEVEL],
                choice("expected quiet, error, warn, info, debug or trace"),
            )?)
            .unwrap_or(LogLevel::Info)
            .directive()
            .to_string(),
        },
    };

    let explorer = flag_or_vars(
        flags.enable_explorer,
        "enable-explorer",
        env,
        &[COSMOS_EMULATOR_ENABLE_EXPLORER, ENABLE_EXPLORER],
        Var::boolean,
    )?;
    let telemetry = flag_or_vars(
        flags.enable_telemetry,
        "enable-telemetry",
        env,
        &[COSMOS_EMULATOR_ENABLE_TELEMETRY, ENABLE_TELEMETRY],
        Var::boolean,
    )?;
    if value(telemetry) == Some(true) {
        notes
            .push("telemetry was asked for: this emulator sends none, whatever the setting".into());
    }

    // The old image's variable takes an IP address only, ours a name too.
    let advertise_host = flag_or_vars(
        flags.advertise_host,
        "advertise-host",
        env,
        &[COSMOS_EMULATOR_ADVERTISE_HOST, IP_ADDRESS_OVERRIDE],
        |v| match v.name {
            IP_ADDRESS_OVERRIDE => v.parse(
                |t| t.parse::<std::net::IpAddr>().ok().map(|ip| ip.to_string()),
                "expected an IP address, such as 192.168.1.20",
            ),
            _ => v.parse(values::host_name, values::ADVERTISE_ACCEPTED),
        },
    )?;

    let health_port = flag_or_vars(
        flags.health_port,
        "health-port",
        env,
        &[COSMOS_EMULATOR_HEALTH_PORT],
        number(.., values::PORT_ACCEPTED),
    )?;
    let parent_pid = flag_or_vars(
        flags.parent_pid,
        "parent-pid",
        env,
        &[COSMOS_EMULATOR_PARENT_PID],
        number(1.., "expected a process id, a whole number such as 4242"),
    )?;

    let config = Config {
        host: value(host).unwrap_or_else(|| DEFAULT_HOST.to_string()),
        port: value(port).unwrap_or(8081),
        key,
        clock,
        background_purge: true,
        protocol,
        cert_out,
        certificate: certificate.certificate,
        cert_dir: certificate.cert_dir,
        change_feed_retention: value(retention)
            .unwrap_or(crate::data::store::DEFAULT_CHANGE_FEED_RETENTION_SECONDS),
        min_ranges_per_container: value(min_ranges).unwrap_or(1).into(),
        consistency: value(consistency).unwrap_or_default(),
        charges: account.charges,
        rate_limit: account.rate_limit,
        burst_capacity: account.burst_capacity,
        regions: account.regions,
        multi_write: account.multi_write,
        serverless: account.serverless,
        compute_gateway_port: value(compute_gateway_port),
        data_dir,
        sync: match value(sync).unwrap_or(SyncArg::Periodic) {
            SyncArg::Always => SyncMode::Always,
            SyncArg::Periodic => SyncMode::Periodic,
            SyncArg::Never => SyncMode::Never,
        },
        explorer: value(explorer).unwrap_or(true),
        advertise_host: value(advertise_host),
        ..Config::default()
    };
    Ok(Settings {
        config,
        health_port: value(health_port),
        parent_pid: value(parent_pid),
        log_filter,
        notes,
    })
}

/// The key variables (two direct, two files): all that are set must hold
/// one key. Messages name them, never the key.
fn key_from_env(env: Env) -> Result<String, Invalid> {
    let is_file = |name: &str| name == KEY_FILE || name == COSMOS_EMULATOR_KEY_FILE;
    let found = agreed(
        "the key (--key, --key-file)",
        env,
        &[COSMOS_EMULATOR_KEY, KEY, COSMOS_EMULATOR_KEY_FILE, KEY_FILE],
        |v| match is_file(v.name) {
            true => key_from_file(&PathBuf::from(&v.text), v.name),
            false => checked_key(&v.text, v.name),
        },
        |v| match is_file(v.name) {
            true => format!("{} ({})", v.name, v.text),
            false => v.name.to_string(),
        },
    )?;
    Ok(found.map_or_else(|| WELL_KNOWN_KEY.into(), |f| f.value))
}

#[cfg(test)]
mod tests;
