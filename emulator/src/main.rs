//! `cosmos-emulator`: serve the emulator until SIGINT or SIGTERM. Settings
//! come from flags, then environment variables (`settings.rs`).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use cosmos_emulator::settings::{self, Flags, Settings};
use cosmos_emulator::Server;

/// mimalloc: items are allocated on request threads and freed by the purge
/// on another; glibc's per-thread arenas make such frees slow and keep
/// freed memory from the system, mimalloc does neither.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What clap also exits with on a bad flag.
const USAGE: u8 = 2;

fn main() -> ExitCode {
    cosmos_emulator::configure_allocator();
    let flags = Flags::parse();
    let settings = match settings::resolve(flags, &settings::process_env) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(USAGE);
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&settings.log_filter)
                .unwrap_or_else(|_| "info".into()),
        )
        .init();
    for note in &settings.notes {
        tracing::info!("{note}");
    }
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
    match runtime.block_on(serve(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(settings: Settings) -> std::io::Result<()> {
    let config = settings.config;
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
