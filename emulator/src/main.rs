//! `cosmos-emulator`: serve the emulator until SIGINT or SIGTERM (or, with
//! `--parent-pid`, until its parent is gone). Settings come from flags,
//! then environment variables (`settings.rs`). `cosmos-emulator health`
//! asks a running one's health server instead (`probe.rs`).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use cosmos_emulator::binary::health::{self, Health};
use cosmos_emulator::binary::settings::{self, Command, Flags, Settings};
use cosmos_emulator::binary::{probe, shutdown};
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
    let mut flags = Flags::try_parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    if let Some(Command::Health(args)) = flags.command.take() {
        return probe::main(args, &settings::process_env);
    }
    let settings = match settings::resolve(flags, &settings::process_env) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(USAGE);
        }
    };
    // First after the settings (flag or variable): a parent that dies from
    // here on must take the emulator along.
    if let Some(pid) = settings.parent_pid {
        if let Err(e) = shutdown::parent_at_start(pid) {
            eprintln!("error: {e}");
            return ExitCode::from(USAGE);
        }
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal only: `docker logs`, a CI log
        // or a file would show the escape sequences as text.
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&settings.log_filter)
                .unwrap_or_else(|_| "info".into()),
        )
        .init();
    for note in &settings.notes {
        tracing::info!("{note}");
    }
    #[cfg(not(unix))]
    if settings.parent_pid.is_some() {
        tracing::warn!("--parent-pid has no effect on this platform");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(cosmos_emulator::protocol::limits::THREAD_STACK_BYTES)
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
    let health = Health::new(&config);
    // Before the data directory is read back: /alive answers meanwhile.
    if let Some(port) = settings.health_port {
        for listener in health::bind(&config.host, port)? {
            tracing::info!(address = %listener.local_addr()?, "health server listening");
            let health = Arc::clone(&health);
            tokio::spawn(async move {
                if let Err(e) = health::serve(listener, health).await {
                    tracing::error!(error = %e, "the health server stopped");
                }
            });
        }
    }
    // Blocks this thread (not a worker's) while a data directory is read back.
    let server = Server::bind(&config)?;
    // Handlers first: a signal that arrives right after the lines below must
    // stop the server cleanly, not kill it.
    let shutdown = shutdown::shutdown_signal(settings.parent_pid)?;
    let endpoint = server.endpoint()?;
    // The port is bound, so the kernel queues connections: the endpoint serves.
    health.ready(endpoint.clone());
    // Scripts read the first line (`localhost` by name on the loopback),
    // tools that want the addresses the second; container tools wait for the
    // last two (Java's Testcontainers module matches `.*Started\r\n$`). One
    // write of all: a reader that takes the first line and closes the pipe
    // must not fail a later write (EPIPE), which would stop the emulator.
    let addresses = server.endpoint_addresses()?.join(" ");
    let compute = match server.compute_endpoint()? {
        Some(compute) => format!("compute gateway listening on {compute}\n"),
        None => String::new(),
    };
    // With --regions, each region's endpoint (the first's is `endpoint`).
    let regions: String = match server.region_endpoints()?.as_slice() {
        [_] => String::new(),
        all => all
            .iter()
            .map(|(name, url)| format!("region {name} listening on {url}\n"))
            .collect(),
    };
    let lines = format!(
        "listening on {endpoint}\naddresses {addresses}\n{compute}{regions}Now listening on: {endpoint}\nStarted\r\n"
    );
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(lines.as_bytes())?;
    stdout.flush()?;
    drop(stdout);
    tracing::info!(clock = ?config.clock, protocol = config.protocol.name(), "serving");
    server.run(shutdown).await?;
    tracing::info!("stopped");
    Ok(())
}
