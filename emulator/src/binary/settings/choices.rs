//! The values flags choose among (`--clock`, `--ru-charges`, `--sync`,
//! `--protocol`, `--log-level`), each as clap reads it.

use clap::ValueEnum;

use crate::net::transport::Protocol;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockArg {
    /// The machine's wall clock.
    System,
    /// Stands still until moved through POST /_emulator/clock.
    Manual,
}

/// `--ru-charges`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuChargesArg {
    /// A model through the service's documented points (`request_units`).
    Documented,
    /// 1 RU a read, 5.71 a write, 2.89 a query.
    Fixed,
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
    pub(super) fn protocol(self) -> Protocol {
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
    pub(super) fn directive(self) -> &'static str {
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
