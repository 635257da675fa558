//! `cosmos-emulator`: serve the emulator until SIGINT or SIGTERM.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use cosmos_emulator::persist::SyncMode;
use cosmos_emulator::{ClockMode, Config, Server, WELL_KNOWN_KEY};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ClockArg {
    /// The machine's wall clock.
    System,
    /// Stands still until moved through POST /_emulator/clock.
    Manual,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SyncArg {
    /// fdatasync before every write is acknowledged (concurrent writes
    /// share one): nothing acknowledged is lost to a power cut.
    Always,
    /// fdatasync once a second: a power cut can lose the last second.
    Periodic,
    /// Leave it to the operating system.
    Never,
}

/// A local Azure Cosmos DB (NoSQL) endpoint with exact time-to-live semantics.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 8081)]
    port: u16,
    /// Base64 master key clients sign requests with.
    #[arg(long, default_value = WELL_KNOWN_KEY, hide_default_value = true)]
    key: String,
    /// Where time comes from.
    #[arg(long, value_enum, default_value_t = ClockArg::System)]
    clock: ClockArg,
    /// Initial time of the manual clock, in epoch seconds (default: now).
    #[arg(long, requires = "clock")]
    clock_start: Option<i64>,
    /// Serve HTTPS, with a certificate for localhost and 127.0.0.1 made at start.
    #[arg(long)]
    tls: bool,
    /// Write the certificate clients should trust to this file (PEM).
    #[arg(long, requires = "tls")]
    cert_out: Option<std::path::PathBuf>,
    /// How long the change feed's all-versions-and-deletes mode can read
    /// back, in seconds of the emulator's clock.
    #[arg(long, default_value_t = cosmos_emulator::store::DEFAULT_CHANGE_FEED_RETENTION_SECONDS, value_parser = clap::value_parser!(i64).range(0..))]
    change_feed_retention: i64,
    /// Give every new container at least this many partition key ranges
    /// (more if its throughput takes more: one per 10,000 RU/s), to run an
    /// application or a test suite against several ranges.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1000))]
    ranges_per_container: u16,
    /// Keep everything in this directory (created if needed) and load it
    /// at start; without it, data lives in memory only. Every acknowledged
    /// write survives the process being killed; --sync chooses power-loss
    /// durability.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<std::path::PathBuf>,
    /// When acknowledged writes reach the disk (with --data-dir).
    #[arg(long, value_enum, default_value_t = SyncArg::Periodic, requires = "data_dir")]
    sync: SyncArg,
}

/// mimalloc: items are allocated on request threads and freed by the purge
/// on another; glibc's per-thread arenas make such frees slow and keep
/// freed memory from the system, mimalloc does neither.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cosmos_emulator::configure_allocator();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let clock = match (cli.clock, cli.clock_start) {
        (ClockArg::Manual, start) => ClockMode::Manual { start },
        (ClockArg::System, None) => ClockMode::System,
        (ClockArg::System, Some(_)) => {
            eprintln!("error: --clock-start needs --clock manual");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        host: cli.host,
        port: cli.port,
        key: cli.key,
        clock,
        background_purge: true,
        tls: cli.tls,
        cert_out: cli.cert_out,
        change_feed_retention: cli.change_feed_retention,
        min_ranges_per_container: cli.ranges_per_container.into(),
        data_dir: cli.data_dir,
        sync: match cli.sync {
            SyncArg::Always => SyncMode::Always,
            SyncArg::Periodic => SyncMode::Periodic,
            SyncArg::Never => SyncMode::Never,
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(cosmos_emulator::limits::THREAD_STACK_BYTES)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> std::io::Result<()> {
    let server = Server::bind(&config)?;
    // Handlers first: a signal that arrives right after the line below must
    // stop the server cleanly, not kill it.
    let shutdown = shutdown_signal()?;
    // Scripts wait for this one line on stdout.
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.endpoint()?)?;
    stdout.flush()?;
    tracing::info!(clock = ?config.clock, tls = config.tls, "serving");
    server.run(shutdown).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Registers SIGINT and SIGTERM now; the future completes on either.
#[cfg(unix)]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
