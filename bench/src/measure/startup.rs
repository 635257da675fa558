//! Startup time: from spawning the process to the first successful signed
//! request (`GET /`, the account read every SDK starts with), over several
//! runs; also from spawn to the `listening on` line.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::connection::{Connection, Endpoint};
use crate::cosmos::Signer;
use crate::process::ServerProcess;
use crate::stats::median;
use crate::targets::Target;

#[derive(Debug, Clone, Serialize)]
pub struct Startup {
    pub runs: usize,
    /// Spawn to the first 2xx answer, per run.
    pub ready_ms: Vec<f64>,
    pub median_ready_ms: f64,
    /// Spawn to the `listening on` line, median.
    pub median_line_ms: f64,
}

pub async fn measure(target: &Target, runs: usize, key: &str) -> Result<Startup, String> {
    let mut ready_ms = Vec::with_capacity(runs);
    let mut line_ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let process = ServerProcess::spawn(target.command())?;
        let endpoint = Endpoint::parse(&process.url)?;
        let signer = Signer::new(key, &endpoint.authority())?;
        first_success(&endpoint, &signer).await?;
        ready_ms.push(process.spawned_at.elapsed().as_secs_f64() * 1e3);
        line_ms.push(process.spawned_to_line.as_secs_f64() * 1e3);
    }
    Ok(Startup {
        runs,
        median_ready_ms: median(&ready_ms).unwrap_or(f64::NAN),
        median_line_ms: median(&line_ms).unwrap_or(f64::NAN),
        ready_ms,
    })
}

/// Retries the account read until it answers 2xx (10 s at most).
pub async fn first_success(endpoint: &Endpoint, signer: &Signer) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last_error = String::new();
    while Instant::now() < deadline {
        match Connection::open(endpoint).await {
            Ok(mut connection) => match connection.send(signer.read_account()).await {
                Ok(response) if response.status.is_success() => return Ok(()),
                Ok(response) => last_error = format!("GET / answered {}", response.status),
                Err(e) => last_error = e.to_string(),
            },
            Err(e) => last_error = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Err(format!(
        "{} never answered GET / successfully: {last_error}",
        endpoint.url()
    ))
}
