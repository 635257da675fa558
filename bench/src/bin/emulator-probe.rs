//! `emulator-probe`: the emulator library served as `cosmos-emulator`
//! serves it (tokio's multi-thread runtime, `Server::bind` then `run` with
//! the background purge), plus a probe the binary has no route for: each
//! stdin line `stored DB COLL` is answered with one stdout line, the number
//! of items the container physically holds, expired-but-unpurged ones
//! included (`Store::stored_item_count`). The bench polls it to see when
//! the purge has deleted the expired items, without changing the emulator.
//!
//! Differences from the binary: no tracing subscriber (the emulator logs
//! nothing per request at its default level), and one thread blocked on
//! stdin.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use cosmos_emulator::{ClockMode, Config, Server, Store, WELL_KNOWN_KEY};

#[derive(Debug, Parser)]
#[command(about = "The emulator with a stored-item probe on stdin, for the purge benchmark")]
struct Cli {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 0)]
    port: u16,
    #[arg(long, default_value = WELL_KNOWN_KEY, hide_default_value = true)]
    key: String,
    /// `manual` (the test clock) or `system`.
    #[arg(long, default_value = "manual")]
    clock: String,
}

/// The same allocator as the `cosmos-emulator` binary, so that the probe
/// measures what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cosmos_emulator::configure_allocator();
    let cli = Cli::parse();
    let clock = match cli.clock.as_str() {
        "manual" => ClockMode::Manual { start: None },
        "system" => ClockMode::System,
        other => {
            eprintln!("emulator-probe: --clock {other:?}: expected manual or system");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        host: cli.host,
        port: cli.port,
        key: cli.key,
        clock,
        background_purge: true,
        tls: false,
        cert_out: None,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("emulator-probe: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("emulator-probe: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> std::io::Result<()> {
    let server = Server::bind(&config)?;
    let store = server.store();
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.endpoint()?)?;
    stdout.flush()?;
    std::thread::spawn(move || answer_probes(&store));
    server
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

fn answer_probes(store: &Arc<Store>) {
    let mut stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer = match words.as_slice() {
            ["stored", db, coll] => match store.stored_item_count(db, coll) {
                Ok(count) => count.to_string(),
                Err(e) => format!("error {e}"),
            },
            _ => format!("error unknown probe {line:?}: expected `stored DB COLL`"),
        };
        if writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}
