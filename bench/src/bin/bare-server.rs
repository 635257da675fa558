//! `bare-server`: the emulator's HTTP stack (axum on hyper, tokio's
//! multi-thread runtime, as `cosmos-emulator` runs it) answering every
//! request with one fixed JSON body of a given size and fixed headers
//! (the bench gives it the emulator's point-read headers), after reading
//! the request body. No routing, no authentication, no store: the ceiling
//! the emulator's point reads could reach on this machine.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
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
    /// A header of every answer, `name: value` (repeated: the emulator's
    /// point-read headers, so that both answers weigh the same).
    #[arg(long = "header")]
    headers: Vec<String>,
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
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for header in &cli.headers {
        let (name, value) = header.split_once(':').ok_or_else(|| {
            std::io::Error::other(format!("--header {header:?}: expected `name: value`"))
        })?;
        let name = HeaderName::try_from(name.trim()).map_err(std::io::Error::other)?;
        let value = HeaderValue::try_from(value.trim()).map_err(std::io::Error::other)?;
        headers.insert(name, value);
    }
    let app = Router::new()
        .fallback(answer)
        .with_state(Arc::new(Answer { headers, body }));
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

/// The answer to every request.
struct Answer {
    headers: HeaderMap,
    body: Bytes,
}

/// Reads the request body (as the emulator does for writes), answers the fixed one.
async fn answer(State(answer): State<Arc<Answer>>, request: Bytes) -> impl IntoResponse {
    drop(request);
    (answer.headers.clone(), answer.body.clone())
}
