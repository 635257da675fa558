//! `cosmos-emulator`: serve the emulator until SIGINT or SIGTERM.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use cosmos_emulator::{ClockMode, Config, Server, WELL_KNOWN_KEY};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ClockArg {
    /// The machine's wall clock.
    System,
    /// Stands still until moved through POST /_emulator/clock.
    Manual,
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
}

fn main() -> ExitCode {
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
    };
    let runtime = match tokio::runtime::Runtime::new() {
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
    // Scripts wait for this one line on stdout.
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.endpoint()?)?;
    stdout.flush()?;
    tracing::info!(clock = ?config.clock, "serving");
    server.run(shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("install the SIGTERM handler");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
