//! The environment variables: their names, which flag each stands for, and
//! how one setting's variables are read together (the rules of the
//! `settings` module's doc: empty is unset, invalid stops the start naming
//! the variable, two that disagree stop it naming both).

use super::{Env, Invalid};

// Every flag's own variable: `COSMOS_EMULATOR_` and the flag in upper snake case.
pub const COSMOS_EMULATOR_HOST: &str = "COSMOS_EMULATOR_HOST";
pub const COSMOS_EMULATOR_PORT: &str = "COSMOS_EMULATOR_PORT";
pub const COSMOS_EMULATOR_KEY: &str = "COSMOS_EMULATOR_KEY";
pub const COSMOS_EMULATOR_KEY_FILE: &str = "COSMOS_EMULATOR_KEY_FILE";
pub const COSMOS_EMULATOR_CLOCK: &str = "COSMOS_EMULATOR_CLOCK";
pub const COSMOS_EMULATOR_CLOCK_START: &str = "COSMOS_EMULATOR_CLOCK_START";
pub const COSMOS_EMULATOR_TLS: &str = "COSMOS_EMULATOR_TLS";
pub const COSMOS_EMULATOR_PROTOCOL: &str = "COSMOS_EMULATOR_PROTOCOL";
pub const COSMOS_EMULATOR_CERT_OUT: &str = "COSMOS_EMULATOR_CERT_OUT";
pub const COSMOS_EMULATOR_CERT: &str = "COSMOS_EMULATOR_CERT";
pub const COSMOS_EMULATOR_CERT_KEY: &str = "COSMOS_EMULATOR_CERT_KEY";
pub const COSMOS_EMULATOR_CERT_PASSWORD: &str = "COSMOS_EMULATOR_CERT_PASSWORD";
pub const COSMOS_EMULATOR_CERT_DIR: &str = "COSMOS_EMULATOR_CERT_DIR";
pub const COSMOS_EMULATOR_CHANGE_FEED_RETENTION: &str = "COSMOS_EMULATOR_CHANGE_FEED_RETENTION";
pub const COSMOS_EMULATOR_RANGES_PER_CONTAINER: &str = "COSMOS_EMULATOR_RANGES_PER_CONTAINER";
pub const COSMOS_EMULATOR_DATA_DIR: &str = "COSMOS_EMULATOR_DATA_DIR";
pub const COSMOS_EMULATOR_SYNC: &str = "COSMOS_EMULATOR_SYNC";
pub const COSMOS_EMULATOR_LOG_LEVEL: &str = "COSMOS_EMULATOR_LOG_LEVEL";
pub const COSMOS_EMULATOR_ENABLE_EXPLORER: &str = "COSMOS_EMULATOR_ENABLE_EXPLORER";
pub const COSMOS_EMULATOR_ENABLE_TELEMETRY: &str = "COSMOS_EMULATOR_ENABLE_TELEMETRY";
pub const COSMOS_EMULATOR_ADVERTISE_HOST: &str = "COSMOS_EMULATOR_ADVERTISE_HOST";
pub const COSMOS_EMULATOR_HEALTH_PORT: &str = "COSMOS_EMULATOR_HEALTH_PORT";
pub const COSMOS_EMULATOR_PARENT_PID: &str = "COSMOS_EMULATOR_PARENT_PID";
pub const COSMOS_EMULATOR_CONSISTENCY: &str = "COSMOS_EMULATOR_CONSISTENCY";
pub const COSMOS_EMULATOR_COMPUTE_GATEWAY_PORT: &str = "COSMOS_EMULATOR_COMPUTE_GATEWAY_PORT";
pub const COSMOS_EMULATOR_REGIONS: &str = "COSMOS_EMULATOR_REGIONS";
pub const COSMOS_EMULATOR_MULTI_WRITE: &str = "COSMOS_EMULATOR_MULTI_WRITE";
pub const COSMOS_EMULATOR_SERVERLESS: &str = "COSMOS_EMULATOR_SERVERLESS";
pub const COSMOS_EMULATOR_RU_CHARGES: &str = "COSMOS_EMULATOR_RU_CHARGES";
pub const COSMOS_EMULATOR_RATE_LIMIT: &str = "COSMOS_EMULATOR_RATE_LIMIT";
pub const COSMOS_EMULATOR_BURST_CAPACITY: &str = "COSMOS_EMULATOR_BURST_CAPACITY";
/// No flag: the data directory when nothing else chooses one (a container
/// image's volume), so that the image persists by default while
/// `AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE=false` still turns it off.
pub const COSMOS_EMULATOR_DEFAULT_DATA_DIR: &str = "COSMOS_EMULATOR_DEFAULT_DATA_DIR";
/// No flag: the protocol when no flag or variable chooses one (the image's
/// `auto`), so that a user's `PROTOCOL=https` or `http` wins without a
/// conflict.
pub const COSMOS_EMULATOR_DEFAULT_PROTOCOL: &str = "COSMOS_EMULATOR_DEFAULT_PROTOCOL";
/// No flag: where to write the certificate when HTTPS is served and no
/// `--cert-out` is given (the image's path, where Testcontainers for Python
/// copies it from); ignored with plain HTTP instead of refused.
pub const COSMOS_EMULATOR_DEFAULT_CERT_OUT: &str = "COSMOS_EMULATOR_DEFAULT_CERT_OUT";

// Microsoft's Linux emulator ("vNext").
pub const PORT: &str = "PORT";
pub const PROTOCOL: &str = "PROTOCOL";
pub const KEY_FILE: &str = "KEY_FILE";
pub const DATA_PATH: &str = "DATA_PATH";
pub const LOG_LEVEL: &str = "LOG_LEVEL";
pub const ENABLE_EXPLORER: &str = "ENABLE_EXPLORER";
pub const ENABLE_TELEMETRY: &str = "ENABLE_TELEMETRY";
/// Its certificate (a PKCS#12 file) and that file's password.
pub const CERT_PATH: &str = "CERT_PATH";
pub const CERT_SECRET: &str = "CERT_SECRET";
// Its older image.
pub const KEY: &str = "AZURE_COSMOS_EMULATOR_KEY";
pub const PARTITION_COUNT: &str = "AZURE_COSMOS_EMULATOR_PARTITION_COUNT";
pub const ENABLE_DATA_PERSISTENCE: &str = "AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE";
pub const IP_ADDRESS_OVERRIDE: &str = "AZURE_COSMOS_EMULATOR_IP_ADDRESS_OVERRIDE";
/// The tracing filter, which beats the log level variables (but not `--log-level`).
pub const RUST_LOG: &str = "RUST_LOG";

/// Each flag (its long name) and the variables that stand for it, its own
/// first; `--help` names them after the flag's text (whose prose names the
/// variables that bear on it otherwise: `RUST_LOG`, the data directory's).
pub const FLAG_VARIABLES: &[(&str, &[&str])] = &[
    ("host", &[COSMOS_EMULATOR_HOST]),
    ("port", &[COSMOS_EMULATOR_PORT, PORT]),
    ("key", &[COSMOS_EMULATOR_KEY, KEY]),
    ("key-file", &[COSMOS_EMULATOR_KEY_FILE, KEY_FILE]),
    ("clock", &[COSMOS_EMULATOR_CLOCK]),
    ("clock-start", &[COSMOS_EMULATOR_CLOCK_START]),
    ("tls", &[COSMOS_EMULATOR_TLS]),
    ("protocol", &[COSMOS_EMULATOR_PROTOCOL, PROTOCOL]),
    ("cert-out", &[COSMOS_EMULATOR_CERT_OUT]),
    ("cert", &[COSMOS_EMULATOR_CERT, CERT_PATH]),
    ("cert-key", &[COSMOS_EMULATOR_CERT_KEY]),
    (
        "cert-password",
        &[COSMOS_EMULATOR_CERT_PASSWORD, CERT_SECRET],
    ),
    ("cert-dir", &[COSMOS_EMULATOR_CERT_DIR]),
    ("consistency", &[COSMOS_EMULATOR_CONSISTENCY]),
    ("regions", &[COSMOS_EMULATOR_REGIONS]),
    ("multi-write", &[COSMOS_EMULATOR_MULTI_WRITE]),
    ("serverless", &[COSMOS_EMULATOR_SERVERLESS]),
    ("ru-charges", &[COSMOS_EMULATOR_RU_CHARGES]),
    ("rate-limit", &[COSMOS_EMULATOR_RATE_LIMIT]),
    ("burst-capacity", &[COSMOS_EMULATOR_BURST_CAPACITY]),
    (
        "compute-gateway-port",
        &[COSMOS_EMULATOR_COMPUTE_GATEWAY_PORT],
    ),
    (
        "change-feed-retention",
        &[COSMOS_EMULATOR_CHANGE_FEED_RETENTION],
    ),
    (
        "ranges-per-container",
        &[COSMOS_EMULATOR_RANGES_PER_CONTAINER, PARTITION_COUNT],
    ),
    ("data-dir", &[COSMOS_EMULATOR_DATA_DIR, DATA_PATH]),
    ("sync", &[COSMOS_EMULATOR_SYNC]),
    ("log-level", &[COSMOS_EMULATOR_LOG_LEVEL, LOG_LEVEL]),
    (
        "enable-explorer",
        &[COSMOS_EMULATOR_ENABLE_EXPLORER, ENABLE_EXPLORER],
    ),
    (
        "enable-telemetry",
        &[COSMOS_EMULATOR_ENABLE_TELEMETRY, ENABLE_TELEMETRY],
    ),
    (
        "advertise-host",
        &[COSMOS_EMULATOR_ADVERTISE_HOST, IP_ADDRESS_OVERRIDE],
    ),
    ("health-port", &[COSMOS_EMULATOR_HEALTH_PORT]),
    ("parent-pid", &[COSMOS_EMULATOR_PARENT_PID]),
];

/// Every variable the binary reads (tests clear them around a child).
pub const VARIABLES: &[&str] = &[
    COSMOS_EMULATOR_HOST,
    COSMOS_EMULATOR_PORT,
    COSMOS_EMULATOR_KEY,
    COSMOS_EMULATOR_KEY_FILE,
    COSMOS_EMULATOR_CLOCK,
    COSMOS_EMULATOR_CLOCK_START,
    COSMOS_EMULATOR_TLS,
    COSMOS_EMULATOR_PROTOCOL,
    COSMOS_EMULATOR_CERT_OUT,
    COSMOS_EMULATOR_CERT,
    COSMOS_EMULATOR_CERT_KEY,
    COSMOS_EMULATOR_CERT_PASSWORD,
    COSMOS_EMULATOR_CERT_DIR,
    COSMOS_EMULATOR_CHANGE_FEED_RETENTION,
    COSMOS_EMULATOR_RANGES_PER_CONTAINER,
    COSMOS_EMULATOR_DATA_DIR,
    COSMOS_EMULATOR_SYNC,
    COSMOS_EMULATOR_LOG_LEVEL,
    COSMOS_EMULATOR_ENABLE_EXPLORER,
    COSMOS_EMULATOR_ENABLE_TELEMETRY,
    COSMOS_EMULATOR_ADVERTISE_HOST,
    COSMOS_EMULATOR_HEALTH_PORT,
    COSMOS_EMULATOR_PARENT_PID,
    COSMOS_EMULATOR_CONSISTENCY,
    COSMOS_EMULATOR_COMPUTE_GATEWAY_PORT,
    COSMOS_EMULATOR_REGIONS,
    COSMOS_EMULATOR_MULTI_WRITE,
    COSMOS_EMULATOR_SERVERLESS,
    COSMOS_EMULATOR_RU_CHARGES,
    COSMOS_EMULATOR_RATE_LIMIT,
    COSMOS_EMULATOR_BURST_CAPACITY,
    COSMOS_EMULATOR_DEFAULT_DATA_DIR,
    COSMOS_EMULATOR_DEFAULT_PROTOCOL,
    COSMOS_EMULATOR_DEFAULT_CERT_OUT,
    PORT,
    PROTOCOL,
    KEY_FILE,
    DATA_PATH,
    LOG_LEVEL,
    ENABLE_EXPLORER,
    ENABLE_TELEMETRY,
    CERT_PATH,
    CERT_SECRET,
    KEY,
    PARTITION_COUNT,
    ENABLE_DATA_PERSISTENCE,
    IP_ADDRESS_OVERRIDE,
    RUST_LOG,
];

/// Variables whose value `None` counts as unset. Testcontainers for Python
/// sets `AZURE_COSMOS_EMULATOR_PARTITION_COUNT` to `str(partition_count)`
/// whatever its user gave, so to the text `None` when they gave nothing:
/// that asks for no particular count, and must start the emulator as
/// Microsoft's image does (which ignores it).
const NONE_MEANS_UNSET: &[&str] = &[PARTITION_COUNT];

/// One set, non-empty variable, as text.
pub(crate) struct Var {
    pub name: &'static str,
    pub text: String,
}

impl Var {
    /// The variable, unless unset, empty (or, for some, `None`).
    pub fn read(env: Env, name: &'static str) -> Result<Option<Var>, Invalid> {
        let Some(value) = env(name).filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        let text = value
            .into_string()
            .map_err(|_| Invalid(format!("{name} is not valid UTF-8")))?;
        if text == "None" && NONE_MEANS_UNSET.contains(&name) {
            return Ok(None);
        }
        Ok(Some(Var { name, text }))
    }

    /// `parse` of the text, or a refusal naming the variable and `accepted`.
    pub fn parse<T>(
        &self,
        parse: impl FnOnce(&str) -> Option<T>,
        accepted: &str,
    ) -> Result<T, Invalid> {
        parse(&self.text).ok_or_else(|| self.invalid(accepted))
    }

    pub fn invalid(&self, accepted: &str) -> Invalid {
        Invalid(format!("{}={:?}: {accepted}", self.name, self.text))
    }

    pub fn boolean(&self) -> Result<bool, Invalid> {
        self.parse(super::values::parse_bool, super::values::BOOL_ACCEPTED)
    }

    /// `NAME="text"`, as messages quote it.
    fn shown(&self) -> String {
        format!("{}={:?}", self.name, self.text)
    }
}

/// A setting's value and where it came from: `--flag` or `NAME="text"`
/// (for a message that must name it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sourced<T> {
    pub value: T,
    pub source: String,
}

/// The flag's value if given (its variables are then not read), else the
/// value of `names`, each parsed by `parse` and all alike; `None` when
/// neither is set. `flag_name` is the flag's long name, for the messages.
pub(super) fn flag_or_vars<T: PartialEq>(
    flag: Option<T>,
    flag_name: &str,
    env: Env,
    names: &[&'static str],
    parse: impl Fn(&Var) -> Result<T, Invalid>,
) -> Result<Option<Sourced<T>>, Invalid> {
    if let Some(value) = flag {
        return Ok(Some(Sourced {
            value,
            source: format!("--{flag_name}"),
        }));
    }
    agreed(&format!("--{flag_name}"), env, names, parse, Var::shown)
}

/// The value of `names` (each parsed by `parse`), which must all agree
/// about `setting`; `shown` says a variable in a message (a key's must not
/// show the key).
pub(super) fn agreed<T: PartialEq>(
    setting: &str,
    env: Env,
    names: &[&'static str],
    parse: impl Fn(&Var) -> Result<T, Invalid>,
    shown: impl Fn(&Var) -> String,
) -> Result<Option<Sourced<T>>, Invalid> {
    let mut found: Option<Sourced<T>> = None;
    for &name in names {
        let Some(var) = Var::read(env, name)? else {
            continue;
        };
        let value = parse(&var)?;
        match &found {
            Some(first) if first.value != value => {
                return Err(Invalid(format!(
                    "{} and {} disagree about {setting}: set only one of them",
                    first.source,
                    shown(&var)
                )))
            }
            Some(_) => {}
            None => {
                found = Some(Sourced {
                    value,
                    source: shown(&var),
                })
            }
        }
    }
    Ok(found)
}
