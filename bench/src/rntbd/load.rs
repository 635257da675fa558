//! The Direct-mode load: `concurrency` workers, each sending one request at
//! a time as the HTTP rows' workers do, but sharing a few connections as
//! the SDKs share theirs: ceil(concurrency / 30) connections (the Java
//! SDK pipelines up to 30 requests on one, `DirectConnectionConfig`'s
//! `maxRequestsPerConnection`, before it opens another), worker `i` on
//! connection `i mod n`, so that no connection has more than 30 requests
//! in flight. Connections are opened, and their context exchanged, before
//! the clock starts. The samples are the HTTP load's (`crate::load`), so
//! the window and the CPU accounting are the same.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::connection::Endpoint;
use crate::load::{Load, Sample, Samples};
use crate::rntbd::connection::DirectConnection;
use crate::rntbd::frame::ResponseFrame;

/// Requests in flight on one connection, at most.
pub const REQUESTS_PER_CONNECTION: usize = 30;

/// Builds a worker's next request frame: gets the worker's random numbers
/// and the request's TransportRequestID.
pub type MakeFrame = dyn Fn(&mut fastrand::Rng, u32) -> Vec<u8> + Send + Sync;

/// Connections `concurrency` workers share.
pub fn connections_for(concurrency: usize) -> usize {
    concurrency.div_ceil(REQUESTS_PER_CONNECTION).max(1)
}

/// A running Direct-mode load and the connections its workers share.
pub struct DirectLoad {
    pub load: Load,
    pub connections: Vec<Arc<DirectConnection>>,
}

/// Opens the connections, then starts the workers; they run until the
/// load is stopped.
pub async fn start(
    endpoint: &Endpoint,
    concurrency: usize,
    make: Arc<MakeFrame>,
) -> Result<DirectLoad, String> {
    let mut connections = Vec::new();
    for _ in 0..connections_for(concurrency) {
        connections.push(Arc::new(DirectConnection::open(endpoint).await?));
    }
    let origin = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let workers = (0..concurrency)
        .map(|i| {
            let connection = connections[i % connections.len()].clone();
            let stop = stop.clone();
            let make = make.clone();
            let rng = fastrand::Rng::with_seed(0x5eed + i as u64);
            tokio::spawn(worker(connection, origin, stop, rng, make))
        })
        .collect();
    Ok(DirectLoad {
        load: Load::from_workers(origin, stop, workers),
        connections,
    })
}

async fn worker(
    connection: Arc<DirectConnection>,
    origin: Instant,
    stop: Arc<AtomicBool>,
    mut rng: fastrand::Rng,
    make: Arc<MakeFrame>,
) -> Samples {
    let mut out = Samples::default();
    out.samples.reserve(1 << 14);
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        let result = connection.call(|id| make(&mut rng, id)).await;
        let latency = start.elapsed();
        match result {
            Ok(answer) if (200..300).contains(&answer.status) => out.samples.push(Sample {
                start_us: start.duration_since(origin).as_micros() as u64,
                latency_us: latency.as_micros().min(u128::from(u32::MAX)) as u32,
            }),
            Ok(answer) => out.error(refusal(&answer)),
            Err(e) => {
                // The connection is gone: this worker stops (the others on
                // it too); the errors say so in the row.
                out.error(format!("Direct mode: {e}"));
                break;
            }
        }
    }
    out
}

/// An answer that is no 2xx, in words.
pub fn refusal(answer: &ResponseFrame) -> String {
    format!(
        "{} (substatus {}): {:.200}",
        answer.status,
        answer
            .ulong(crate::rntbd::frame::response::SUB_STATUS)
            .unwrap_or(0),
        String::from_utf8_lossy(answer.payload().unwrap_or_default())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(1, 1)]
    #[case(16, 1)]
    #[case(30, 1)]
    #[case(31, 2)]
    #[case(64, 3)]
    fn connections_hold_at_most_thirty_requests(#[case] concurrency: usize, #[case] n: usize) {
        assert_eq!(connections_for(concurrency), n);
        // The busiest connection, worker i on connection i mod n.
        assert!(concurrency.div_ceil(n) <= REQUESTS_PER_CONNECTION);
    }
}
