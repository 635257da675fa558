//! The load generator: workers, each with its own keep-alive connection,
//! sending one request at a time and keeping every request's start and
//! latency; and the measurement window around them, with the CPU time the
//! bench itself and the server spent in it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::Request;
use serde::Serialize;
use tokio::task::JoinHandle;

use crate::connection::{Connection, Endpoint};
use crate::cosmos::Body;
use crate::process::{own_cpu_time, ServerProcess};
use crate::stats::Latency;

/// Builds a worker's next request; gets the worker's random numbers.
pub type MakeRequest = dyn Fn(&mut fastrand::Rng) -> Request<Body> + Send + Sync;

/// Builds request number `index` of a counted run.
pub type MakeIndexed = dyn Fn(usize) -> Request<Body> + Send + Sync;

/// One successful request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// When it was sent, in microseconds after the load started.
    pub start_us: u64,
    pub latency_us: u32,
}

impl Sample {
    pub fn end_us(&self) -> u64 {
        self.start_us + u64::from(self.latency_us)
    }
}

/// What the workers observed.
#[derive(Debug, Default)]
pub struct Samples {
    pub samples: Vec<Sample>,
    pub errors: usize,
    pub first_error: Option<String>,
}

impl Samples {
    /// Counts a failed request, keeping the first message.
    pub fn error(&mut self, message: String) {
        self.errors += 1;
        self.first_error.get_or_insert(message);
    }

    fn absorb(&mut self, other: Samples) {
        self.samples.extend(other.samples);
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    /// Latencies of the requests that completed within `[from_us, to_us)`.
    pub fn completed_within(&self, from_us: u64, to_us: u64) -> Vec<u32> {
        self.samples
            .iter()
            .filter(|s| (from_us..to_us).contains(&s.end_us()))
            .map(|s| s.latency_us)
            .collect()
    }

    /// Latencies of the requests that were sent within `[from_us, to_us)`.
    pub fn started_within(&self, from_us: u64, to_us: u64) -> Vec<u32> {
        self.samples
            .iter()
            .filter(|s| (from_us..to_us).contains(&s.start_us))
            .map(|s| s.latency_us)
            .collect()
    }
}

/// How long stopping waits for a request in flight.
pub const STOP_LIMIT: Duration = Duration::from_secs(10);

/// Workers running until stopped.
pub struct Load {
    origin: Instant,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<Samples>>,
}

impl Load {
    /// Opens `concurrency` connections, then starts a worker on each; each
    /// sends `make`'s requests back to back until [`Load::stop`].
    pub async fn start(
        endpoint: &Endpoint,
        concurrency: usize,
        make: Arc<MakeRequest>,
    ) -> Result<Load, String> {
        let connections = open_all(endpoint, concurrency).await?;
        let origin = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let workers = connections
            .into_iter()
            .enumerate()
            .map(|(i, connection)| {
                let stop = stop.clone();
                let make = make.clone();
                let mut rng = fastrand::Rng::with_seed(0x5eed + i as u64);
                tokio::spawn(worker(connection, endpoint.clone(), origin, move || {
                    (!stop.load(Ordering::Relaxed)).then(|| make(&mut rng))
                }))
            })
            .collect();
        Ok(Load {
            origin,
            stop,
            workers,
        })
    }

    /// Workers started elsewhere (another transport's, e.g. Direct mode's
    /// pipelined connections): each runs until `stop` is set and returns
    /// its samples, timed from `origin`.
    pub fn from_workers(
        origin: Instant,
        stop: Arc<AtomicBool>,
        workers: Vec<JoinHandle<Samples>>,
    ) -> Load {
        Load {
            origin,
            stop,
            workers,
        }
    }

    /// Microseconds from the start of the load to `at`.
    pub fn offset_us(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.origin).as_micros() as u64
    }

    /// Stops the workers (each finishes its request in flight; one still
    /// waiting after [`STOP_LIMIT`] is abandoned and counted as an error).
    pub async fn stop(self) -> Samples {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Samples::default();
        for mut worker in self.workers {
            match tokio::time::timeout(STOP_LIMIT, &mut worker).await {
                Ok(Ok(samples)) => all.absorb(samples),
                Ok(Err(e)) => all.error(format!("a worker failed: {e}")),
                Err(_) => {
                    worker.abort();
                    all.error(format!(
                        "a request was still unanswered {STOP_LIMIT:?} after the load stopped"
                    ));
                }
            }
        }
        all
    }
}

/// How a throughput measurement is timed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Window {
    /// Load before the window (connections warm, caches filled).
    pub warmup: Duration,
    /// The window: requests completed within it count.
    pub measure: Duration,
}

/// Throughput and latency of one load at one concurrency.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    pub concurrency: usize,
    pub requests: usize,
    pub seconds: f64,
    pub per_second: f64,
    pub latency: Option<Latency>,
    pub errors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// The bench's own CPU time per request (building, signing, sending,
    /// reading): the load generator's cost.
    pub client_cpu_us_per_request: f64,
    /// The server's CPU time per request, all its threads.
    pub server_cpu_us_per_request: Option<f64>,
}

/// Runs `make`'s requests at `concurrency` for the warm-up and the window.
pub async fn throughput(
    endpoint: &Endpoint,
    concurrency: usize,
    window: Window,
    server: Option<&ServerProcess>,
    make: Arc<MakeRequest>,
) -> Result<Throughput, String> {
    let load = Load::start(endpoint, concurrency, make).await?;
    Ok(measure(load, concurrency, window, server).await)
}

/// Times a running load: the warm-up, then the window; stops it and sums
/// up the requests completed within the window.
pub async fn measure(
    load: Load,
    concurrency: usize,
    window: Window,
    server: Option<&ServerProcess>,
) -> Throughput {
    tokio::time::sleep(window.warmup).await;
    let (from, own_from, server_from) = (
        Instant::now(),
        own_cpu_time(),
        server.and_then(|s| s.cpu_time().ok()),
    );
    tokio::time::sleep(window.measure).await;
    let (to, own_to, server_to) = (
        Instant::now(),
        own_cpu_time(),
        server.and_then(|s| s.cpu_time().ok()),
    );
    let (from_us, to_us) = (load.offset_us(from), load.offset_us(to));
    let samples = load.stop().await;
    let latencies = samples.completed_within(from_us, to_us);
    let requests = latencies.len();
    let seconds = (to - from).as_secs_f64();
    let per_request = |cpu: Duration| cpu.as_secs_f64() * 1e6 / requests.max(1) as f64;
    Throughput {
        concurrency,
        requests,
        seconds,
        per_second: requests as f64 / seconds,
        latency: Latency::of(latencies),
        errors: samples.errors,
        first_error: samples.first_error,
        client_cpu_us_per_request: per_request(own_to.saturating_sub(own_from)),
        server_cpu_us_per_request: server_from
            .zip(server_to)
            .map(|(a, b)| per_request(b.saturating_sub(a))),
    }
}

/// A counted run (e.g. loading items).
#[derive(Debug, Clone, Serialize)]
pub struct Counted {
    pub requests: usize,
    pub seconds: f64,
    pub per_second: f64,
    pub errors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// Sends requests `0..total` (built by `make`) over `concurrency`
/// connections, each worker taking the next index when it is free.
pub async fn run_count(
    endpoint: &Endpoint,
    concurrency: usize,
    range: std::ops::Range<usize>,
    make: Arc<MakeIndexed>,
) -> Result<Counted, String> {
    let connections = open_all(endpoint, concurrency).await?;
    let origin = Instant::now();
    let next = Arc::new(AtomicUsize::new(range.start));
    let end = range.end;
    let workers: Vec<_> = connections
        .into_iter()
        .map(|connection| {
            let next = next.clone();
            let make = make.clone();
            tokio::spawn(worker(connection, endpoint.clone(), origin, move || {
                let index = next.fetch_add(1, Ordering::Relaxed);
                (index < end).then(|| make(index))
            }))
        })
        .collect();
    let mut all = Samples::default();
    for worker in workers {
        all.absorb(worker.await.map_err(|e| format!("a worker failed: {e}"))?);
    }
    let seconds = origin.elapsed().as_secs_f64();
    Ok(Counted {
        requests: range.len(),
        seconds,
        per_second: range.len() as f64 / seconds,
        errors: all.errors,
        first_error: all.first_error,
    })
}

async fn open_all(endpoint: &Endpoint, concurrency: usize) -> Result<Vec<Connection>, String> {
    let mut connections = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        connections.push(
            Connection::open(endpoint)
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", endpoint.url()))?,
        );
    }
    Ok(connections)
}

/// Sends `next`'s requests one at a time until it says `None`. A broken
/// connection is reopened once per failure; if that fails the worker stops.
async fn worker(
    mut connection: Connection,
    endpoint: Endpoint,
    origin: Instant,
    mut next: impl FnMut() -> Option<Request<Body>>,
) -> Samples {
    let mut out = Samples::default();
    out.samples.reserve(1 << 14);
    while let Some(request) = next() {
        let start = Instant::now();
        let result = connection.send(request).await;
        let latency = start.elapsed();
        match result {
            Ok(response) if response.status.is_success() => out.samples.push(Sample {
                start_us: start.duration_since(origin).as_micros() as u64,
                latency_us: latency.as_micros().min(u128::from(u32::MAX)) as u32,
            }),
            Ok(response) => {
                let body = String::from_utf8_lossy(&response.body);
                out.error(format!("{}: {:.200}", response.status, body));
            }
            Err(e) => {
                out.error(format!("request failed: {e}"));
                match Connection::open(&endpoint).await {
                    Ok(fresh) => connection = fresh,
                    Err(e) => {
                        out.error(format!("cannot reconnect: {e}"));
                        break;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(start_us: u64, latency_us: u32) -> Sample {
        Sample {
            start_us,
            latency_us,
        }
    }

    #[test]
    fn windows_select_by_completion_or_by_start() {
        let samples = Samples {
            samples: vec![sample(0, 10), sample(5, 10), sample(15, 100), sample(20, 1)],
            ..Samples::default()
        };
        // Ends: 10, 15, 115, 21.
        assert_eq!(samples.completed_within(10, 21), vec![10, 10]);
        assert_eq!(samples.completed_within(10, 200), vec![10, 10, 100, 1]);
        assert_eq!(samples.started_within(5, 20), vec![10, 100]);
    }
}
