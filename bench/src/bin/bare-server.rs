//! `bare-server`: the emulator's HTTP stack (axum on hyper, tokio's
//! multi-thread runtime, as `cosmos-emulator` runs it) answering every
//! request with one fixed JSON body of a given size, after reading the
//! request body. No routing, no authentication, no store: the ceiling the
//! emulator's point reads could reach on this machine.

use std::io::Write;
use std::process::ExitCode;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::Router;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(about = "A fixed-body HTTP server on the emulator's stack: the benchmark's ceiling")]
struct Cli {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// 0 picks a free port.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Size of the JSON body of every answer.
    #[arg(long, default_value_t = 1200)]
    body_bytes: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bare-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bare-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(cli: Cli) -> std::io::Result<()> {
    let body = cosmos_bench::documents::document(0, None, cli.body_bytes);
    let app = Router::new().fallback(answer).with_state(body);
    let listener = tokio::net::TcpListener::bind((cli.host.as_str(), cli.port)).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on http://{}", listener.local_addr()?)?;
    stdout.flush()?;
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

/// Reads the request body (as the emulator does for writes), answers the fixed one.
async fn answer(State(body): State<Bytes>, request: Bytes) -> impl IntoResponse {
    drop(request);
    ([(CONTENT_TYPE, "application/json")], body)
}
